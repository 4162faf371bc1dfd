"""Stop 21: does the one-launch group norm's time depend on where its counters / partials / input sit?"""
import importlib.util, sys, torch
from triton.testing import do_bench
from foundry.spec.loader import load_operator
from foundry.writers.template import TemplateWriter

op = load_operator("examples/ops/groupnorm.py")
w = TemplateWriter(loader=lambda _: op)
src = w.render(op.spec, {"row.split": "auto", "row.combine": "one_kernel", "row.BLOCK_N": 8192, "row.num_warps": 4})
src = src.replace("        partial = torch.empty((M, tiles, 3), device=v_1.device, dtype=torch.float32)",
                  "        partial = PART[0][PART[1]:PART[1] + M * tiles * 3].view(M, tiles, 3)")
src = src.replace("        arrived = torch.zeros((M,), device=v_1.device, dtype=torch.int32)",
                  "        arrived = SYNC[0][SYNC[1]:SYNC[1] + M * SYNC[2]:SYNC[2]]; arrived.zero_()")
src = src.replace("_groupnorm_split_one_kernel[(M * tiles,)](v_1, p_norm_weight, p_norm_bias, add_17, n_3, n_8, partial, arrived,",
                  "_groupnorm_split_one_kernel[(M * tiles,)](v_1, p_norm_weight, p_norm_bias, add_17, n_3, n_8, partial, SYNC[0][SYNC[1]:],")
src = src.replace("sync_ptr + row,", "sync_ptr + row * STRIDE,").replace("BLOCK_S=triton.next_power_of_2(tiles), FB=", "STRIDE=SYNC[2], BLOCK_S=triton.next_power_of_2(tiles), FB=")
src = src.replace("S, SPIN_LIMIT, BLOCK_M: tl.constexpr,", "S, SPIN_LIMIT, STRIDE: tl.constexpr, BLOCK_M: tl.constexpr,")
p = "/tmp/off_mod.py"; open(p, "w").write(src)
spec = importlib.util.spec_from_file_location("off_mod", p); m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
sync_buf = torch.zeros(1 << 24, device="cuda", dtype=torch.int32)
part_buf = torch.empty(1 << 24, device="cuda", dtype=torch.float32)
m.PART = (part_buf, 0)
x = torch.randn(16, 128, 128, 128, device="cuda")
ref = op.model_cls(8, 128).cuda()
model = m.ModelNew(8, 128).cuda(); model.load_state_dict(ref.state_dict())
with torch.no_grad():
    want = ref(x)
    for label, sync, part in [("base", (sync_buf, 0, 1), 0), ("sync+32", (sync_buf, 32, 1), 0), ("sync+1K", (sync_buf, 1024, 1), 0),
                              ("sync+64K", (sync_buf, 1 << 16, 1), 0), ("sync+1M", (sync_buf, 1 << 20, 1), 0), ("sync+4M", (sync_buf, 1 << 22, 1), 0),
                              ("stride32", (sync_buf, 0, 32), 0), ("stride1024", (sync_buf, 0, 1024), 0), ("stride1024+1M", (sync_buf, 1 << 20, 1024), 0),
                              ("part+1M", (sync_buf, 0, 1), 1 << 20), ("part+4M", (sync_buf, 0, 1), 1 << 22), ("base again", (sync_buf, 0, 1), 0)]:
        m.SYNC = sync; m.PART = (part_buf, part)
        err = (model(x) - want).abs().max().item()
        ts = [do_bench(lambda: model(x)) for _ in range(2)]
        print(f"{label}: {' '.join(f'{t:.4f}' for t in ts)} ms err {err:.1e}", flush=True)
