"""Stop 23: why the compute ceiling rose with the masked timer (linear layers 70% -> 55% of the roofline at unchanged
times). The roofline's matmuls (8192^3, fp32 with TF32 off, and TF32 for 3xTF32), timed as `ceilings` does
(30 trials, no flush), plain pass and masked pass, 3 rounds; the SM clock read by nvidia-smi after each."""
import subprocess, torch
from foundry.evaluate.timing import time_cuda

a = torch.randn(8192, 8192, device="cuda")
b = torch.randn(8192, 8192, device="cuda")


def clock():
    return subprocess.run(["nvidia-smi", "--query-gpu=clocks.sm,power.draw", "--format=csv,noheader"],
                          capture_output=True, text=True).stdout.strip()


for rnd in range(3):
    for tf32 in (False, True):
        torch.backends.cuda.matmul.allow_tf32 = tf32
        r = time_cuda(torch.mm, [[a, b]], trials=30, warmup=3, flush=False)
        tflops = lambda ms: 2 * 8192**3 / (ms * 1e-3) / 1e12
        print(f"round {rnd} {'tf32' if tf32 else 'fp32'}: plain {r.plain_median_ms:.3f} ms ({tflops(r.plain_median_ms):.1f} TFLOP/s), "
              f"masked {r.median_ms:.3f} ms ({tflops(r.median_ms):.1f}), mask {r.mask_ms:.2f} ms, host {r.host_ms:.3f} ms; "
              f"after: {clock()}", flush=True)
