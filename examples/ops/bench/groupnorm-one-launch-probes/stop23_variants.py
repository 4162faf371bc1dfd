"""Stop 23: what is left between the one-launch group norm (0.0820 ms, 77.3%) and 80% (0.0789 ms)?
Variants of the generated kernel (text edits of the template's source), timed by the evaluator's own timer
(foundry.evaluate.timing.time_cuda: L2 flush, masked pass), round-robin, 3 rounds, with copy, eager, compile:
  product      as generated (torch.zeros for the arrival counters each call)
  ticket       no per-call fill: a counter kept across calls, each program waits for its call's S arrivals
               (target = (ticket // S + 1) * S); state kept across calls (the guard would refuse it)
  selfclean    no per-call fill, state restored: a second arrival after the merge, the last one resets to 0
  maxnreg=R    the product launched with a register cap
  streaming    x loaded evict_first, the output stored .cs (streaming)
  no_wait      wrong output, same traffic: the wait's cost"""
import importlib.util, sys, torch
from foundry.evaluate.timing import time_cuda
from foundry.spec.loader import load_operator
from foundry.writers.template import TemplateWriter

op = load_operator("examples/ops/groupnorm.py")
w = TemplateWriter(loader=lambda _: op)
ref = op.model_cls(8, 128).cuda()
x = torch.randn(16, 128, 128, 128, device="cuda")
with torch.no_grad():
    expect = ref(x)
src = w.render(op.spec, {"row.split": "auto", "row.combine": "one_kernel", "row.BLOCK_N": 8192, "row.num_warps": 4})
ARRIVE = "    arrived = tl.atomic_add(sync_ptr + row, 1, sem='release') + 1\n"
WAIT = "    while (arrived < S) & (spins < SPIN_LIMIT):\n"
IF = "    if arrived < S:\n"
ZEROS = "        arrived = torch.zeros((M,), device=v_1.device, dtype=torch.int32)\n"
LAUNCH_END = "FB=512, CH_TILE=HW % 8192 == 0, num_warps=4)"
MERGED = "    sum_2_pm2 = tl.load(part + 2, mask=part_mask, other=0.0, cache_modifier='.cg')\n"
assert all(s in src for s in (ARRIVE, WAIT, IF, ZEROS, LAUNCH_END, MERGED)), "template changed"
KEPT = "\n\nKEPT = {}\n\n\ndef kept_counter(M, device, dtype):\n    key = (M, str(device), dtype)\n    if key not in KEPT:\n        KEPT[key] = torch.zeros((M,), device=device, dtype=dtype)\n    return KEPT[key]\n"

ticket = (src.replace(ARRIVE, "    ticket = tl.atomic_add(sync_ptr + row, 1, sem='release')\n    target = (ticket // S + 1) * S\n    arrived = ticket + 1\n")
          .replace(WAIT, "    while (arrived < target) & (spins < SPIN_LIMIT):\n").replace(IF, "    if arrived < target:\n")
          .replace(ZEROS, "        arrived = kept_counter(M, v_1.device, torch.int64)\n") + KEPT)
selfclean = (src.replace(MERGED, MERGED + "    done = tl.atomic_add(sync_ptr + row, 1, sem='acq_rel')\n    if done == 2 * S - 1:\n        tl.atomic_xchg(sync_ptr + row, 0)\n")
             .replace(ZEROS, "        arrived = kept_counter(M, v_1.device, torch.int32)\n") + KEPT)
def in_one(text, old, new):
    """Replace `old` inside the one-launch kernel only (the other kernels have the same lines)."""
    a = text.index("def _groupnorm_split_one_kernel")
    b = text.index("def _groupnorm_split_partial_kernel")
    assert old in text[a:b], old
    return text[:a] + text[a:b].replace(old, new) + text[b:]


streaming = in_one(in_one(src, "    v_1 = tl.load(v_1_ptr + row_off + cols, mask=mask, other=0.0).to(tl.float32)\n",
                          "    v_1 = tl.load(v_1_ptr + row_off + cols, mask=mask, other=0.0, eviction_policy='evict_first').to(tl.float32)\n"),
                   "add_17.to(add_17_ptr.dtype.element_ty), mask=mask)\n", "add_17.to(add_17_ptr.dtype.element_ty), mask=mask, cache_modifier='.cs')\n")
assert streaming.count("evict_first") == 1 and streaming.count("'.cs'") >= 1
variants = {"product": src, "ticket": ticket, "selfclean": selfclean, "streaming": streaming,
            "no_wait": src.replace(WAIT, "    while (arrived < 0) & (spins < SPIN_LIMIT):\n").replace(IF, "    if arrived < 0:\n")}
for r in (96, 104, 112):
    variants[f"maxnreg={r}"] = src.replace(LAUNCH_END, LAUNCH_END[:-1] + f", maxnreg={r})")
variants["ticket+streaming"] = streaming.replace(ARRIVE, ticket[ticket.index("    ticket = "):ticket.index("    spins = ")]).replace(
    WAIT, "    while (arrived < target) & (spins < SPIN_LIMIT):\n").replace(IF, "    if arrived < target:\n").replace(
    ZEROS, "        arrived = kept_counter(M, v_1.device, torch.int64)\n") + KEPT

fns = {}
for name, text in variants.items():
    p = f"/tmp/s23_{name.replace('=', '_').replace('+', '_')}.py"
    open(p, "w").write(text)
    spec = importlib.util.spec_from_file_location(f"s23_{len(fns)}", p)
    m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
    model = m.ModelNew(8, 128).cuda(); model.load_state_dict(ref.state_dict())
    with torch.no_grad():
        errs = [(model(x) - expect).abs().max().item() for _ in range(3)]
    facts = []
    for cache in getattr(m._groupnorm_split_one_kernel, "device_caches", {}).values():
        for k in cache[0].values():
            facts.append(f"regs {getattr(k, 'n_regs', '?')} spills {getattr(k, 'n_spills', '?')}")
    print(f"{name}: max err over 3 calls {max(errs):.2e}; {'; '.join(facts)}", flush=True)
    fns[name] = model
out = torch.empty_like(x)
fns["copy (copy_ into a kept tensor)"] = lambda t: out.copy_(t)
fns["zeros((128,), int32) alone"] = lambda t: torch.zeros((128,), device=t.device, dtype=torch.int32)
fns["eager"] = ref
fns["torch.compile"] = torch.compile(ref)
with torch.no_grad():
    fns["torch.compile"](x)
results = {name: [] for name in fns}
for rnd in range(3):
    for name, fn in fns.items():
        r = time_cuda(fn, [[x]], trials=200)
        results[name].append(r)
FLOOR = 0.0631  # ms: 268 MB read and written at the evaluator's 4257 GB/s copy bandwidth
for name, rs in results.items():
    med = " ".join(f"{r.median_ms:.4f}" for r in rs)
    plain = " ".join(f"{r.plain_median_ms:.4f}" for r in rs)
    print(f"{name:34s} masked {med}  ({100 * FLOOR / min(r.median_ms for r in rs):.1f}% of floor)  plain {plain}  host {rs[0].host_ms:.3f}", flush=True)
