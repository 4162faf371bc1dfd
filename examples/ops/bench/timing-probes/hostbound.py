"""Stop 22: is the one-launch group norm's slow mode host launch overhead leaking into the timed window?
Per kernel: A = the evaluator's method (flush, start event, call, end event); B = the same with the device
kept busy (torch.cuda._sleep) between the flush and the start event, so the call is enqueued before the
device reaches it; H = the host's time to enqueue one call (perf_counter around the call, no sync)."""
import importlib.util, statistics, time, torch
from foundry.spec.loader import load_operator
from foundry.writers.template import TemplateWriter

op = load_operator("examples/ops/groupnorm.py")
w = TemplateWriter(loader=lambda _: op)
ref = op.model_cls(8, 128).cuda()
x = torch.randn(16, 128, 128, 128, device="cuda")
out = torch.empty_like(x)
scratch = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")


def load(label, genes):
    src = w.render(op.spec, genes)
    p = f"/tmp/hb_{label}.py"; open(p, "w").write(src)
    spec = importlib.util.spec_from_file_location(f"hb_{label}", p); m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
    model = m.ModelNew(8, 128).cuda(); model.load_state_dict(ref.state_dict())
    return model


one = load("one", {"row.split": "auto", "row.combine": "one_kernel", "row.BLOCK_N": 8192, "row.num_warps": 4})
two = load("two", {"row.split": "auto", "row.BLOCK_N": 1024, "row.num_warps": 4, "row.welford": "lane"})
compiled = torch.compile(ref)
with torch.no_grad():
    compiled(x)
s0, s1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
s0.record(); torch.cuda._sleep(10_000_000); s1.record(); torch.cuda.synchronize()
cycles_per_ms = 10_000_000 / s0.elapsed_time(s1)
SLEEP = int(1.0 * cycles_per_ms)  # 1 ms of device time ahead of every timed call


def run(fn, masked, trials=100):
    times, host = [], []
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(trials)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(trials)]
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    for i in range(trials):
        scratch.zero_()
        if masked:
            torch.cuda._sleep(SLEEP)
        starts[i].record()
        t = time.perf_counter()
        fn()
        host.append((time.perf_counter() - t) * 1e3)
        ends[i].record()
    torch.cuda.synchronize()
    times = [a.elapsed_time(b) for a, b in zip(starts, ends)]
    return statistics.median(times), statistics.median(host), max(times)


kernels = {
    "copy": lambda: out.copy_(x),
    "eager": lambda: ref(x),
    "compile": lambda: compiled(x),
    "one": lambda: one(x),
    "two": lambda: two(x),
}
with torch.no_grad():
    for rep in range(3):
        line = []
        for name, fn in kernels.items():
            a, ha, amax = run(fn, False)
            b, hb, bmax = run(fn, True)
            line.append(f"{name} A {a:.4f} B {b:.4f} host {hb:.4f}")
        print(f"rep {rep} (sleep {SLEEP} cycles = 1 ms): " + "; ".join(line), flush=True)
