"""Stop 21 probe: variants of the generated one-launch group norm (text edits of HEAD's render), do_bench + regs."""
import importlib.util, re, sys, torch, triton
from triton.testing import do_bench
from foundry.spec.loader import load_operator
from foundry.writers.template import TemplateWriter

op = load_operator("examples/ops/groupnorm.py")
w = TemplateWriter(loader=lambda _: op)
FB_START = "    if arrived < S:\n"
FB_END = "    tl.debug_barrier()\n    splits = tl.arange(0, BLOCK_S)\n"
WAIT = "    while (arrived < S) & (spins < SPIN_LIMIT):\n"


def nofb(s):
    a = s.index(FB_START); b = s.index(FB_END)
    s = s[:a] + s[b:]
    return s.replace(WAIT, "    while arrived < S:\n")


def ticket(s):
    s = nofb(s)
    s = s.replace("    pid = tl.program_id(0)\n    row = pid // S", "    pid = tl.atomic_add(sync_ptr + M, 1)\n    row = pid // S", 1)
    return s.replace("arrived = torch.zeros((M,)", "arrived = torch.zeros((M + 1,)")


def reload(s):
    load = re.search(r"    v_1 = tl.load\(v_1_ptr \+ row_off \+ cols, [^\n]*\n", s[s.index("def _groupnorm_split_one_kernel"):]).group(0)
    return s.replace("    sub_5 = v_1 - div_4\n    mul_13 = sub_5 * rsqrt_12\n    mul_15 = mul_13 * g_14\n    add_17 = mul_15 + g_16\n    tl.store(add_17_ptr + row_off + cols, add_17.to(add_17_ptr.dtype.element_ty), mask=mask)\n\n\n@triton.jit\ndef _groupnorm_split_partial",
                     load + "    sub_5 = v_1 - div_4\n    mul_13 = sub_5 * rsqrt_12\n    mul_15 = mul_13 * g_14\n    add_17 = mul_15 + g_16\n    tl.store(add_17_ptr + row_off + cols, add_17.to(add_17_ptr.dtype.element_ty), mask=mask)\n\n\n@triton.jit\ndef _groupnorm_split_partial", 1)


SMALL_FB = '''    if arrived < S:
        for other in range(0, S):
            start_o = other * BLOCK_N
            c_o = 0.0
            mean_o = 0.0
            m2_o = 0.0
            for sub in range(0, BLOCK_N, FB):
                cols_o = start_o + sub + tl.arange(0, FB)
                mask_o = cols_o < N
                v_o = tl.load(v_1_ptr + row * N + cols_o, mask=mask_o, other=0.0).to(tl.float32)
                n_b = tl.sum(mask_o.to(tl.float32), axis=0)
                mean_b = tl.sum(v_o, axis=0) / tl.maximum(n_b, 1.0)
                d_b = tl.where(mask_o, v_o - mean_b, 0.0)
                m2_b = tl.sum(d_b * d_b, axis=0)
                tot = c_o + n_b
                delta = mean_b - mean_o
                mean_o = mean_o + delta * n_b / tl.maximum(tot, 1.0)
                m2_o = m2_o + m2_b + delta * delta * c_o * n_b / tl.maximum(tot, 1.0)
                c_o = tot
            part_o = part_ptr + (row * S + other) * 3
            tl.store(part_o + 0, c_o)
            tl.store(part_o + 1, mean_o)
            tl.store(part_o + 2, m2_o)
'''


def smallfb(s):
    a = s.index(FB_START); b = s.index(FB_END)
    s = s[:a] + SMALL_FB + s[b:]
    s = s.replace("BLOCK_S: tl.constexpr, CH_TILE: tl.constexpr):\n    # one program per (row, chunk of one tile)", "BLOCK_S: tl.constexpr, CH_TILE: tl.constexpr, FB: tl.constexpr = 512):\n    # one program per (row, chunk of one tile)", 1)
    return s


def fold(s):
    return s.replace("    sub_5 = v_1 - div_4\n    mul_13 = sub_5 * rsqrt_12\n    mul_15 = mul_13 * g_14\n    add_17 = mul_15 + g_16\n    tl.store(add_17_ptr + row_off + cols, add_17.to(add_17_ptr.dtype.element_ty), mask=mask)\n\n\n@triton.jit\ndef _groupnorm_split_partial",
                     "    a_f = rsqrt_12 * g_14\n    c_f = g_16 - div_4 * a_f\n    add_17 = v_1 * a_f + c_f\n    tl.store(add_17_ptr + row_off + cols, add_17.to(add_17_ptr.dtype.element_ty), mask=mask)\n\n\n@triton.jit\ndef _groupnorm_split_partial", 1)


VARIANTS = {"as_is": lambda s: s, "nofb": nofb, "ticket": ticket, "reload": reload, "smallfb": smallfb,
            "fold": fold, "smallfb_fold": lambda s: fold(smallfb(s)), "nofb_fold": lambda s: fold(nofb(s))}
if __name__ == '__main__':
    torch.manual_seed(0)
    x = torch.randn(16, 128, 128, 128, device="cuda") * 3 + 5
    ref = op.model_cls(8, 128).cuda()
    with torch.no_grad():
        ref.norm.weight.uniform_(0.5, 1.5); ref.norm.bias.uniform_(-1, 1)
        want = ref(x)
    out = torch.empty_like(x)
    copy = do_bench(lambda: out.copy_(x))
    print(f"copy {copy:.4f} ms {2 * x.nbytes / copy / 1e9:.0f} GB/s", flush=True)
    for block, warps in ((8192, 4), (8192, 8), (16384, 8), (16384, 16), (4096, 4)):
        base = w.render(op.spec, {"row.split": "auto", "row.combine": "one_kernel", "row.BLOCK_N": block, "row.num_warps": warps})
        for name, f in VARIANTS.items():
            try:
                text = f(base)
                assert text != base or name == "as_is", name
                p = f"/tmp/gnv_{name}_{block}_{warps}.py"; open(p, "w").write(text)
                spec = importlib.util.spec_from_file_location(f"gnv_{name}_{block}_{warps}", p); m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
                model = m.ModelNew(8, 128).cuda(); model.load_state_dict(ref.state_dict())
                with torch.no_grad():
                    err = (model(x) - want).abs().max().item()
                    ms = do_bench(lambda: model(x))
                regs = "?"
                try:
                    for cache in m._groupnorm_split_one_kernel.device_caches.values():
                        for k in cache[0].values():
                            regs = f"{k.n_regs} regs {k.n_spills} spills"
                except Exception as e:
                    regs = repr(e)[:80]
                print(f"{block}/{warps} {name}: {ms:.4f} ms ({copy / ms * 100:.0f}% of copy) err {err:.1e} {regs}", flush=True)
            except Exception as e:
                print(f"{block}/{warps} {name}: {type(e).__name__}: {str(e)[:300]}", flush=True)
