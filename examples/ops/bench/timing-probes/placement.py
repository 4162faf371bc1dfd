"""Stop 22 (v2: timestamps, copy and eager again at the end): one-launch group norm vs where its input and output sit (3 inputs x 3 outputs, one process), and
variants with cache hints, beside copy and the two-kernel split at the same placements."""
import importlib.util, sys, time, torch
from triton.testing import do_bench
from foundry.spec.loader import load_operator
from foundry.writers.template import TemplateWriter

op = load_operator("examples/ops/groupnorm.py")
w = TemplateWriter(loader=lambda _: op)
ref = op.model_cls(8, 128).cuda()
xs = [torch.randn(16, 128, 128, 128, device="cuda") for _ in range(3)]
ys = [torch.empty_like(xs[0]) for _ in range(3)]
ONE = {"row.split": "auto", "row.combine": "one_kernel", "row.BLOCK_N": 8192, "row.num_warps": 4}
TWO = {"row.split": "auto", "row.BLOCK_N": 1024, "row.num_warps": 4, "row.welford": "lane"}
LOAD = "    v_1 = tl.load(v_1_ptr + row_off + cols, mask=mask, other=0.0).to(tl.float32)\n    sum_2_count = tl.minimum(N - start"
LOAD_EF = "    v_1 = tl.load(v_1_ptr + row_off + cols, mask=mask, other=0.0, eviction_policy='evict_first').to(tl.float32)\n    sum_2_count = tl.minimum(N - start"
STORE = "    tl.store(add_17_ptr + row_off + cols, add_17.to(add_17_ptr.dtype.element_ty), mask=mask)\n\n\n@triton.jit\ndef _groupnorm_split_partial"
STORE_CS = "    tl.store(add_17_ptr + row_off + cols, add_17.to(add_17_ptr.dtype.element_ty), mask=mask, cache_modifier='.cs')\n\n\n@triton.jit\ndef _groupnorm_split_partial"
WAIT = "    while (arrived < S) & (spins < SPIN_LIMIT):\n"


def load(label, src):
    src = src.replace("    add_17 = torch.empty(shape, device=v_1.device, dtype=torch.float32)",
                      "    add_17 = OUT.view(shape) if OUT is not None else torch.empty(shape, device=v_1.device, dtype=torch.float32)")
    src = "OUT = None\n" + src
    p = f"/tmp/pl_{label}.py"; open(p, "w").write(src)
    spec = importlib.util.spec_from_file_location(f"pl_{label}", p); m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
    model = m.ModelNew(8, 128).cuda(); model.load_state_dict(ref.state_dict())
    return m, model


one = w.render(op.spec, ONE)
assert LOAD in one and STORE in one and WAIT in one
variants = {
    "one": one,
    "one_ef": one.replace(LOAD, LOAD_EF),
    "one_cs": one.replace(STORE, STORE_CS),
    "one_ef_cs": one.replace(LOAD, LOAD_EF).replace(STORE, STORE_CS),
    "no_wait": one.replace(WAIT, "    while (arrived < 0) & (spins < SPIN_LIMIT):\n").replace("    if arrived < S:\n", "    if arrived < 0:\n"),
    "two": w.render(op.spec, TWO),
}
mods = {k: load(k, v) for k, v in variants.items()}
with torch.no_grad():
    for k, (m, model) in mods.items():  # correctness once (bar no_wait)
        m.OUT = None
        err = (model(xs[0]) - ref(xs[0])).abs().max().item()
        if k != "no_wait":
            assert err < 1e-3, (k, err)
    rows = {}
    stamps = {}
    pairs = [(i, j) for i in range(3) for j in range(3)]

    def measure(name, fn_for):
        rows[name], stamps[name] = [], []
        for i, j in pairs:
            stamps[name].append(time.time())
            rows[name].append(do_bench(fn_for(i, j), rep=40, return_mode="median"))

    measure("copy", lambda i, j: (lambda: ys[j].copy_(xs[i])))
    measure("eager", lambda i, j: (lambda: ref(xs[i])))
    for k, (m, model) in mods.items():
        def fn_for(i, j, m=m, model=model):
            def call():
                m.OUT = ys[j]
                return model(xs[i])
            return call
        measure(k, fn_for)
        m.OUT = None
    measure("copy_end", lambda i, j: (lambda: ys[j].copy_(xs[i])))
    measure("eager_end", lambda i, j: (lambda: ref(xs[i])))
print("pairs (x,y): " + " ".join(f"{i}{j}" for i, j in pairs))
for k, v in rows.items():
    print(f"{k:10s} " + " ".join(f"{t:.4f}" for t in v) + f"   t0={stamps[k][0]:.2f}", flush=True)
