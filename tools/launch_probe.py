"""Host time per call of generated forwards against one bare Triton launch, beside eager and torch.compile (GPU).

    python3 tools/template_bench.py emit DIR examples/ops/OP.py --candidates 1   # any machine (PYTHONPATH=bot)
    for f in DIR/*__0.py; do cp $f CANDS/$(basename ${f%__0.py}).py; done
    OUT=results python3 tools/launch_probe.py CANDS OP...                        # on the GPU, from the repo root

Per operator: host_us (enqueue time per call with the device kept busy), e2e_us (a host-paced loop: what a
user's loop sees per call), device_us (CUDA events, median), for eager, torch.compile and the candidate, and
bare_launch_host_us (the candidate's own launches replayed as bare kernel[grid](...) calls). A cProfile of the
candidate's forward per operator goes to OUT/profile_OP.txt, the table to OUT/launch_probe.json."""

import cProfile
import importlib.util
import io
import json
import os
import pstats
import statistics
import sys
import time
from pathlib import Path

import torch
import triton

OUT = Path(os.environ.get("OUT", "/tmp"))
HERE = Path(sys.argv[1])
OPS = sys.argv[2:] or [
    "groupnorm",
    "layernorm",
    "softmax",
    "bias_gelu_scale",
    "linear_bias_relu",
    "cross_entropy",
    "rmsnorm",
]


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def host_us(fn, n=200, reps=7):
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    samples = []
    for _ in range(reps):
        torch.cuda._sleep(int(3e8))  # the device is busy: calls only enqueue
        t = time.perf_counter()
        for _ in range(n):
            fn()
        samples.append((time.perf_counter() - t) / n * 1e6)
        torch.cuda.synchronize()
    return round(statistics.median(samples), 2)


def e2e_us(fn, n=200, reps=7):
    """Host-paced loop: what a user's loop sees per call."""
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    samples = []
    for _ in range(reps):
        t = time.perf_counter()
        for _ in range(n):
            fn()
        torch.cuda.synchronize()
        samples.append((time.perf_counter() - t) / n * 1e6)
    return round(statistics.median(samples), 2)


def device_us(fn, n=50):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(n):
        torch.cuda._sleep(int(2e6))
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b) * 1000)
    return round(statistics.median(times), 2)


def capture_launches(model, inputs):
    from triton.runtime.jit import JITFunction

    seen = []
    orig = JITFunction.run

    def run(self, *args, grid, warmup, **kw):
        seen.append((self, args, grid, kw))
        return orig(self, *args, grid=grid, warmup=warmup, **kw)

    JITFunction.run = run
    try:
        with torch.no_grad():
            model(*inputs)
    finally:
        JITFunction.run = orig
    return seen


rows = []
for op in OPS:
    ref_mod = load(Path("examples/ops") / f"{op}.py", f"ref_{op}")
    cand = load(HERE / f"{op}.py", f"cand_{op}")
    torch.manual_seed(0)
    init = ref_mod.get_init_inputs()
    ref = ref_mod.Model(*init).cuda().eval()
    new = cand.ModelNew(*init).cuda().eval()
    new.load_state_dict(ref.state_dict())
    inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in ref_mod.get_inputs()]
    with torch.no_grad():
        ok = torch.allclose(new(*inputs), ref(*inputs), atol=1e-4, rtol=1e-4)
    comp = torch.compile(ref)
    launches = capture_launches(new, inputs)
    row = {"op": op, "correct": bool(ok), "kernels": len(launches)}
    with torch.no_grad():
        for name, fn in {
            "eager": lambda ref=ref, inputs=inputs: ref(*inputs),
            "compile": lambda comp=comp, inputs=inputs: comp(*inputs),
            "foundry": lambda new=new, inputs=inputs: new(*inputs),
        }.items():
            row[f"{name}_host_us"] = host_us(fn)
            row[f"{name}_e2e_us"] = e2e_us(fn)
            row[f"{name}_device_us"] = device_us(fn)
        bare = 0.0
        for jit, args, grid, kw in launches:
            bare += host_us(lambda jit=jit, grid=grid, args=args, kw=kw: jit[grid](*args, **kw))
        row["bare_launch_host_us"] = round(bare, 2)
        pr = cProfile.Profile()
        torch.cuda._sleep(int(3e8))
        pr.enable()
        for _ in range(300):
            new(*inputs)
        pr.disable()
        torch.cuda.synchronize()
        s = io.StringIO()
        pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(14)
        (OUT / f"profile_{op}.txt").write_text(s.getvalue())
    rows.append(row)
    print(json.dumps(row), flush=True)

(OUT / "launch_probe.json").write_text(
    json.dumps(
        {"torch": torch.__version__, "triton": triton.__version__, "gpu": torch.cuda.get_device_name(), "rows": rows},
        indent=1,
    )
)
