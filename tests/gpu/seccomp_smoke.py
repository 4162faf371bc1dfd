"""GPU smoke test of the candidate seccomp filter: a filtered child initializes CUDA, compiles (ptxas) and runs
a Triton kernel, checks its result, and is denied a signal to its parent.

    PYTHONPATH=bot python3 tests/gpu/seccomp_smoke.py
"""

import subprocess
import sys
import tempfile

from foundry.evaluate.seccomp import Filter

CHILD = r"""
import os, torch, triton, triton.language as tl

@triton.jit
def _twice(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, 2 * tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)

x = torch.randn(1 << 20, device="cuda")
y = torch.empty_like(x)
_twice[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
torch.cuda.synchronize()
assert torch.equal(y, 2 * x)
try:
    os.kill(os.getppid(), 0)
    print("parent signal: allowed (filter missing)")
except PermissionError:
    print("parent signal: denied")
print("kernel ok on", torch.cuda.get_device_name())
"""

with tempfile.NamedTemporaryFile("w", suffix=".py") as script:  # @triton.jit needs its source in a file
    script.write(CHILD)
    script.flush()
    proc = subprocess.run([sys.executable, script.name], preexec_fn=Filter().install, capture_output=True, text=True)
print(proc.stdout, proc.stderr[-3000:], "exit", proc.returncode)
sys.exit(proc.returncode)
