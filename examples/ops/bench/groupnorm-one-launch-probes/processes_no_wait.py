"""Stop 21: per process, the one-launch group norm with and without its wait (no wait: wrong output, same traffic)."""
import importlib.util, torch
from triton.testing import do_bench
from foundry.spec.loader import load_operator
from foundry.writers.template import TemplateWriter

op = load_operator("examples/ops/groupnorm.py")
w = TemplateWriter(loader=lambda _: op)
x = torch.randn(16, 128, 128, 128, device="cuda")
ref = op.model_cls(8, 128).cuda()
src = w.render(op.spec, {"row.split": "auto", "row.combine": "one_kernel", "row.BLOCK_N": 8192, "row.num_warps": 4})
WAIT = "    while (arrived < S) & (spins < SPIN_LIMIT):\n"
variants = {"product": src, "no_wait": src.replace(WAIT, "    while (arrived < 0) & (spins < SPIN_LIMIT):\n").replace("    if arrived < S:\n", "    if arrived < 0:\n")}
res = []
for name, text in variants.items():
    p = f"/tmp/wait_{name}.py"; open(p, "w").write(text)
    spec = importlib.util.spec_from_file_location(f"wait_{name}", p); m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
    model = m.ModelNew(8, 128).cuda(); model.load_state_dict(ref.state_dict())
    with torch.no_grad():
        res.append(f"{name} {' '.join(f'{do_bench(lambda: model(x)):.4f}' for _ in range(2))}")
print("; ".join(res), flush=True)
