"""Stop 23: the one-launch group norm at 5 programs per SM (row.occupancy=5, 96 registers), with variants of its
wait and statistics (text edits of the one-launch kernel), timed by the evaluator's timer, 3 rounds round-robin:
  occ5         as generated
  load_polls   the wait polls with volatile loads, then one acquire read (instead of an atomic per poll)
  fb256        the fallback over 256-element chunks (fewer registers held for the branch)
  sumsq        the tile's M2 from sum and sum of squares (two independent reductions, not one after the other)
  ticket       no per-call zero fill (a counter kept across calls; the guard would refuse its state)
  no_wait      wrong output, same traffic"""
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
src = w.render(op.spec, {"row.split": "auto", "row.combine": "one_kernel", "row.BLOCK_N": 8192, "row.num_warps": 4,
                         "row.occupancy": 5})
assert "maxnreg=96" in src


def in_one(text, old, new):
    a, b = text.index("def _groupnorm_split_one_kernel"), text.index("def _groupnorm_split_partial_kernel")
    assert old in text[a:b], old
    return text[:a] + text[a:b].replace(old, new) + text[b:]


POLL = "        arrived = tl.atomic_add(sync_ptr + row, 0, sem='acquire')\n        spins += 1\n"
WAIT = "    while (arrived < S) & (spins < SPIN_LIMIT):\n"
IF = "    if arrived < S:\n"
load_polls = in_one(src, POLL, "        arrived = tl.load(sync_ptr + row, volatile=True)\n        spins += 1\n"
                    "    arrived = tl.atomic_add(sync_ptr + row, 0, sem='acquire')  # acquire: the partials after it\n")
fb256 = src.replace("FB=512,", "FB=256,")
M2 = "    sum_2_dev = tl.where(mask, v_1 - sum_2_mean, 0.0)\n    sum_2_m2 = tl.sum(sum_2_dev * sum_2_dev, axis=1, keep_dims=True)\n"
sumsq = in_one(src, M2, "    sum_2_m2 = tl.sum(tl.where(mask, v_1 * v_1, 0.0), axis=1, keep_dims=True) - sum_2_mean * sum_2_mean * sum_2_count\n")
ARRIVE = "    arrived = tl.atomic_add(sync_ptr + row, 1, sem='release') + 1\n"
ZEROS = "        arrived = torch.zeros((M,), device=v_1.device, dtype=torch.int32)\n"
KEPT = "\n\nKEPT = {}\n\n\ndef kept_counter(M, device):\n    if (M, str(device)) not in KEPT:\n        KEPT[(M, str(device))] = torch.zeros((M,), device=device, dtype=torch.int64)\n    return KEPT[(M, str(device))]\n"
ticket = in_one(in_one(in_one(src, ARRIVE, "    ticket = tl.atomic_add(sync_ptr + row, 1, sem='release')\n    target = (ticket // S + 1) * S\n    arrived = ticket + 1\n"),
                       WAIT, "    while (arrived < target) & (spins < SPIN_LIMIT):\n"), IF, "    if arrived < target:\n").replace(
    ZEROS, "        arrived = kept_counter(M, v_1.device)\n") + KEPT
no_wait = in_one(in_one(src, WAIT, "    while (arrived < 0) & (spins < SPIN_LIMIT):\n"), IF, "    if arrived < 0:\n")
variants = {"occ5": src, "load_polls": load_polls, "fb256": fb256, "sumsq": sumsq, "ticket": ticket, "no_wait": no_wait}
fns = {}
for name, text in variants.items():
    p = f"/tmp/poll_{name}.py"
    open(p, "w").write(text)
    spec = importlib.util.spec_from_file_location(f"poll_{name}", p)
    m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
    model = m.ModelNew(8, 128).cuda(); model.load_state_dict(ref.state_dict())
    with torch.no_grad():
        err = max((model(x) - expect).abs().max().item() for _ in range(3))
    facts = [f"{k.n_regs} registers, {k.n_spills} spills" for c in m._groupnorm_split_one_kernel.device_caches.values()
             for k in c[0].values()]
    print(f"{name}: max err {err:.2e}; {'; '.join(facts)}", flush=True)
    fns[name] = model
out = torch.empty_like(x)
fns["copy"] = lambda t: out.copy_(t)
res = {n: [] for n in fns}
for _ in range(3):
    for n, fn in fns.items():
        res[n].append(time_cuda(fn, [[x]], trials=200).median_ms)
FLOOR = 0.0631
for n, ts in res.items():
    print(f"{n:12s} {' '.join(f'{t:.4f}' for t in ts)}  ({100 * FLOOR / sorted(ts)[1]:.1f}% of floor at the median)", flush=True)
