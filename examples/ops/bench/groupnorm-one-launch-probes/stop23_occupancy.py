"""Stop 23: the row.occupancy gene (a register cap fitting that many programs per SM) over one-launch tiles of
group norm, through the template's own source (genes in, `maxnreg` in the launch), timed by the evaluator's timer
(foundry.evaluate.timing.time_cuda), two rounds, round-robin, beside copy and torch.compile."""
import importlib.util, torch
from foundry.evaluate.timing import time_cuda
from foundry.spec.loader import load_operator
from foundry.writers.template import TemplateWriter

op = load_operator("examples/ops/groupnorm.py")
w = TemplateWriter(loader=lambda _: op)
ref = op.model_cls(8, 128).cuda()
x = torch.randn(16, 128, 128, 128, device="cuda")
with torch.no_grad():
    expect = ref(x)
TILES = [(8192, 4, (0, 5, 6)), (8192, 8, (0, 3, 4)), (4096, 4, (0, 6, 8)), (16384, 8, (0, 3)), (4096, 8, (0, 4, 6))]
fns = {}
for block, warps, occs in TILES:
    for occ in occs:
        genes = {"row.split": "auto", "row.combine": "one_kernel", "row.BLOCK_N": block, "row.num_warps": warps,
                 "row.occupancy": occ}
        name = f"{block}/{warps} warps occupancy {occ}"
        p = f"/tmp/occ_{block}_{warps}_{occ}.py"
        open(p, "w").write(w.render(op.spec, genes))
        spec = importlib.util.spec_from_file_location(f"occ_{len(fns)}", p)
        m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
        model = m.ModelNew(8, 128).cuda(); model.load_state_dict(ref.state_dict())
        with torch.no_grad():
            err = max((model(x) - expect).abs().max().item() for _ in range(2))
        facts = [f"{k.n_regs} registers, {k.n_spills} spills" for c in m._groupnorm_split_one_kernel.device_caches.values()
                 for k in c[0].values()]
        print(f"{name}: max err {err:.2e}; {'; '.join(facts)}", flush=True)
        fns[name] = model
out = torch.empty_like(x)
fns["copy"] = lambda t: out.copy_(t)
fns["torch.compile"] = torch.compile(ref)
with torch.no_grad():
    fns["torch.compile"](x)
res = {n: [] for n in fns}
for _ in range(2):
    for n, fn in fns.items():
        res[n].append(time_cuda(fn, [[x]], trials=200).median_ms)
FLOOR = 0.0631
for n, ts in res.items():
    print(f"{n:32s} {' '.join(f'{t:.4f}' for t in ts)}  ({100 * FLOOR / min(ts):.1f}% of floor)", flush=True)
