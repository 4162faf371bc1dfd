"""Stop 21 probe 2: one-launch group norm, the wait's cost: padded counters, volatile spin, nanosleep backoff; 3 reps each."""
import importlib.util, os, sys, torch, triton
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from variants import VARIANTS, w, op, nofb, smallfb

SPIN_AT = "    while (arrived < S) & (spins < SPIN_LIMIT):\n        arrived = tl.atomic_add(sync_ptr + row, 0, sem='acquire')\n        spins += 1\n"


def pad(s):
    s = s.replace("sync_ptr + row,", "sync_ptr + row * 32,")
    return s.replace("arrived = torch.zeros((M,)", "arrived = torch.zeros((M * 32,)")


def vspin(s):
    assert SPIN_AT in s
    return s.replace(SPIN_AT, SPIN_AT.replace("tl.atomic_add(sync_ptr + row, 0, sem='acquire')", "tl.load(sync_ptr + row, volatile=True)")
                     + "    arrived = tl.atomic_add(sync_ptr + row, 0, sem='acquire')\n")


def sleep(s):
    assert '        spins += 1\n' in s
    return s.replace("        spins += 1\n", "        spins = tl.inline_asm_elementwise('nanosleep.u32 128;\\n add.s32 $0, $1, 1;', '=r,r', [spins], dtype=tl.int32, is_pure=False, pack=1)\n", 1)


V2 = {
    "as_is": lambda s: s,
    "smallfb": smallfb,
    "pad": pad,
    "vspin": vspin,
    "sleep": sleep,
    "smallfb_pad": lambda s: pad(smallfb(s)),
    "smallfb_vspin": lambda s: vspin(smallfb(s)),
    "smallfb_sleep": lambda s: sleep(smallfb(s)),
    "smallfb_pad_vspin_sleep": lambda s: pad(sleep(vspin(smallfb(s)))),
}
CONFIGS = ((8192, 4), (8192, 8), (16384, 16), (16384, 8))

if __name__ == "__main__" and torch.cuda.is_available():
    from triton.testing import do_bench
    torch.manual_seed(0)
    x = torch.randn(16, 128, 128, 128, device="cuda") * 3 + 5
    ref = op.model_cls(8, 128).cuda()
    with torch.no_grad():
        ref.norm.weight.uniform_(0.5, 1.5); ref.norm.bias.uniform_(-1, 1)
        want = ref(x)
    out = torch.empty_like(x)
    copy = do_bench(lambda: out.copy_(x))
    print(f"copy {copy:.4f} ms", flush=True)
    for block, warps in CONFIGS:
        base = w.render(op.spec, {"row.split": "auto", "row.combine": "one_kernel", "row.BLOCK_N": block, "row.num_warps": warps})
        for name, f in V2.items():
            try:
                p = f"/tmp/gn2_{name}_{block}_{warps}.py"; open(p, "w").write(f(base))
                spec = importlib.util.spec_from_file_location(f"gn2_{name}_{block}_{warps}", p); m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
                model = m.ModelNew(8, 128).cuda(); model.load_state_dict(ref.state_dict())
                with torch.no_grad():
                    err = (model(x) - want).abs().max().item()
                    times = [do_bench(lambda: model(x)) for _ in range(3)]
                regs = "?"
                for cache in m._groupnorm_split_one_kernel.device_caches.values():
                    for k in cache[0].values():
                        regs = f"{k.n_regs} regs {k.n_spills} spills"
                ts = " ".join(f"{t:.4f}" for t in times)
                print(f"{block}/{warps} {name}: {ts} ms (best {copy / min(times) * 100:.0f}% of copy) err {err:.1e} {regs}", flush=True)
            except Exception as e:
                print(f"{block}/{warps} {name}: {type(e).__name__}: {str(e)[:300]}", flush=True)
