"""Stop 23: the one-launch group norm's tile statistics (5 programs per SM). Its tile Welford is two block
reductions one after the other (the mean, then the centred squares); M2 from the sum and sum of squares in fp32
(two independent reductions) ran 3.6% faster (stop23_polls) but cancels when the mean is large against the spread.
Variants, text edits of the one-launch kernel, timed by the evaluator's timer, 3 rounds round-robin:
  welford      as generated
  sumsq32      M2 = sum(x^2) - n mean^2 in fp32 (fast, unstable: reference only)
  sumsq64      the same sums in fp64 (2^-53: cancellation harmless unless mean/spread ~ 1e6)
  shifted      sums of x - K, K = the tile's first element (cancellation only when K lies far from the tile's mean)
Each is also checked on an input with a large offset (x * 0.01 + 1000): the error against eager then shows
what cancellation costs. With SWEEP=0 only the checks run (the interpreter, here)."""
import importlib.util, os, torch
from foundry.spec.loader import load_operator
from foundry.writers.template import TemplateWriter

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
SHAPE = (16, 128, 128, 128) if DEVICE == "cuda" else (1, 16, 64, 64)
GROUPS, CHANNELS = (8, 128) if DEVICE == "cuda" else (4, 16)
op = load_operator("examples/ops/groupnorm.py")
w = TemplateWriter(loader=lambda _: op)
ref = op.model_cls(GROUPS, CHANNELS).to(DEVICE)
x = torch.randn(*SHAPE, device=DEVICE)
offset = x * 0.01 + 1000.0
src = w.render(op.spec, {"row.split": "auto", "row.combine": "one_kernel", "row.BLOCK_N": 8192, "row.num_warps": 4,
                         "row.occupancy": 5})


def in_one(text, old, new):
    a, b = text.index("def _groupnorm_split_one_kernel"), text.index("def _groupnorm_split_partial_kernel")
    assert old in text[a:b], old
    return text[:a] + text[a:b].replace(old, new) + text[b:]


STATS = ("    sum_2_mean = tl.sum(tl.where(mask, v_1, 0.0), axis=1, keep_dims=True) / sum_2_count\n"
         "    sum_2_dev = tl.where(mask, v_1 - sum_2_mean, 0.0)\n"
         "    sum_2_m2 = tl.sum(sum_2_dev * sum_2_dev, axis=1, keep_dims=True)\n")
variants = {
    "welford": src,
    "sumsq32": in_one(src, STATS, "    sum_2_s1 = tl.sum(tl.where(mask, v_1, 0.0), axis=1, keep_dims=True)\n"
                      "    sum_2_s2 = tl.sum(tl.where(mask, v_1 * v_1, 0.0), axis=1, keep_dims=True)\n"
                      "    sum_2_mean = sum_2_s1 / sum_2_count\n"
                      "    sum_2_m2 = sum_2_s2 - sum_2_s1 * sum_2_mean\n"),
    "sumsq64": in_one(src, STATS, "    sum_2_x64 = tl.where(mask, v_1, 0.0).to(tl.float64)\n"
                      "    sum_2_s1 = tl.sum(sum_2_x64, axis=1, keep_dims=True)\n"
                      "    sum_2_s2 = tl.sum(sum_2_x64 * sum_2_x64, axis=1, keep_dims=True)\n"
                      "    sum_2_mean = (sum_2_s1 / sum_2_count).to(tl.float32)\n"
                      "    sum_2_m2 = (sum_2_s2 - sum_2_s1 * sum_2_s1 / sum_2_count).to(tl.float32)\n"),
    "shifted": in_one(src, STATS, "    sum_2_k = tl.load(v_1_ptr + row_off + start, mask=row_mask, other=0.0).to(tl.float32)\n"
                      "    sum_2_d = tl.where(mask, v_1 - sum_2_k, 0.0)\n"
                      "    sum_2_s1 = tl.sum(sum_2_d, axis=1, keep_dims=True)\n"
                      "    sum_2_s2 = tl.sum(sum_2_d * sum_2_d, axis=1, keep_dims=True)\n"
                      "    sum_2_mean = sum_2_k + sum_2_s1 / sum_2_count\n"
                      "    sum_2_m2 = sum_2_s2 - sum_2_s1 * sum_2_s1 / sum_2_count\n"),
}
fns = {}
with torch.no_grad():
    expect, expect_off = ref(x), ref(offset)
for name, text in variants.items():
    p = f"/tmp/stats_{name}.py"
    open(p, "w").write(text)
    spec = importlib.util.spec_from_file_location(f"stats_{name}", p)
    m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
    model = m.ModelNew(GROUPS, CHANNELS).to(DEVICE); model.load_state_dict(ref.state_dict())
    with torch.no_grad():
        err = max((model(x) - expect).abs().max().item() for _ in range(2))
        err_off = (model(offset) - expect_off).abs().max().item()
    facts = [f"{k.n_regs} registers, {k.n_spills} spills" for c in getattr(m._groupnorm_split_one_kernel, "device_caches", {}).values()
             for k in c[0].values()]
    print(f"{name}: max err {err:.2e}, offset input {err_off:.2e}; {'; '.join(facts)}", flush=True)
    fns[name] = model
if os.environ.get("SWEEP", "1") == "1" and DEVICE == "cuda":
    from foundry.evaluate.timing import time_cuda
    out = torch.empty_like(x)
    fns["copy"] = lambda t: out.copy_(t)
    res = {n: [] for n in fns}
    for _ in range(3):
        for n, fn in fns.items():
            res[n].append(time_cuda(fn, [[x]], trials=200).median_ms)
    for n, ts in res.items():
        print(f"{n:10s} {' '.join(f'{t:.4f}' for t in ts)}  ({100 * 0.0631 / sorted(ts)[1]:.1f}% of floor at the median)", flush=True)
