"""Stop 21: per process, copy / eager / two kernels / one launch (and one launch writing at other offsets)."""
import importlib.util, torch
from triton.testing import do_bench
from foundry.spec.loader import load_operator
from foundry.writers.template import TemplateWriter

op = load_operator("examples/ops/groupnorm.py")
w = TemplateWriter(loader=lambda _: op)
x = torch.randn(16, 128, 128, 128, device="cuda")
ref = op.model_cls(8, 128).cuda()
out = torch.empty_like(x)
big = torch.empty(x.numel() + (1 << 22), device="cuda")
res = [f"copy {do_bench(lambda: out.copy_(x)):.4f}", f"eager {do_bench(lambda: ref(x)):.4f}"]
for label, genes in (("two", {"row.split": "auto", "row.BLOCK_N": 1024, "row.num_warps": 4, "row.welford": "lane"}),
                     ("one", {"row.split": "auto", "row.combine": "one_kernel", "row.BLOCK_N": 8192, "row.num_warps": 4})):
    src = w.render(op.spec, genes)
    src = src.replace("    add_17 = torch.empty(shape, device=v_1.device, dtype=torch.float32)",
                      "    add_17 = OUT[0][OUT[1]:OUT[1] + v_1.numel()].view(shape) if OUT else torch.empty(shape, device=v_1.device, dtype=torch.float32)")
    p = f"/tmp/proc_{label}.py"; open(p, "w").write(src)
    spec = importlib.util.spec_from_file_location(f"proc_{label}", p); m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
    model = m.ModelNew(8, 128).cuda(); model.load_state_dict(ref.state_dict())
    offsets = (None, 0, 1 << 10, 1 << 16, 1 << 19, 1 << 21) if label == "one" else (None,)
    with torch.no_grad():
        for off in offsets:
            m.OUT = None if off is None else (big, off)
            res.append(f"{label}{'' if off is None else f'@{off}'} {do_bench(lambda: model(x)):.4f}")
print("; ".join(res), flush=True)
