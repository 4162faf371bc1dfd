"""Stop 21: is the one-launch group norm's time bimodal? Fresh processes, do_bench and plain event timing."""
import importlib.util, sys, torch
from triton.testing import do_bench
from foundry.spec.loader import load_operator
from foundry.writers.template import TemplateWriter

op = load_operator("examples/ops/groupnorm.py")
w = TemplateWriter(loader=lambda _: op)
x = torch.randn(16, 128, 128, 128, device="cuda")
ref = op.model_cls(8, 128).cuda()
order = sys.argv[1:] or ["8192/4", "16384/8", "8192/8"]
for cfg in order:
    b, nw = map(int, cfg.split("/"))
    src = w.render(op.spec, {"row.split": "auto", "row.combine": "one_kernel", "row.BLOCK_N": b, "row.num_warps": nw})
    p = f"/tmp/var_{b}_{nw}.py"; open(p, "w").write(src)
    spec = importlib.util.spec_from_file_location(f"var_{b}_{nw}", p); m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
    model = m.ModelNew(8, 128).cuda(); model.load_state_dict(ref.state_dict())
    with torch.no_grad():
        model(x); torch.cuda.synchronize()
        bench = [do_bench(lambda: model(x)) for _ in range(3)]
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(200):
            model(x)
        end.record(); torch.cuda.synchronize()
        plain = start.elapsed_time(end) / 200
    print(f"{cfg}: do_bench {' '.join(f'{t:.4f}' for t in bench)}; back to back {plain:.4f} ms; x at {x.data_ptr() % (1 << 21):#x}", flush=True)
