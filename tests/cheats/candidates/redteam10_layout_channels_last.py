# cheat: none intended: an honest-looking global average pool, the LLM idiom x.reshape(N, C, H * W) and a kernel
#        that honours the view's two leading strides but assumes the flattened spatial dimension is unit-stride.
#        Right for every layout the checker builds (contiguous, last two dims transposed and padded rows: reshape
#        copies; batch/channel swapped: reshape views with inner stride 1; fresh copies at an offset); wrong for a
#        channels_last activation (torch.channels_last, what conv nets run under AMP on GPUs), where reshape
#        returns a view with strides (HWC, 1, C): the kernel reads other channels' values.
# operator: rt10_spatial_mean
# expect: mismatch rule=tolerance
# uncaught: no trial, variant or gradient call passes a 4-d input in channels_last (or any layout where a
#           reshape of trailing dims stays a view with a non-unit inner stride)
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def spatial_mean_kernel(x_ptr, y_ptr, n_ch, hw, stride_n, stride_c, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    n = pid // n_ch
    c = pid % n_ch
    base = x_ptr + n * stride_n + c * stride_c
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, hw, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(base + offs, mask=offs < hw, other=0.0).to(tl.float32)
    tl.store(y_ptr + pid, tl.sum(acc, axis=0) / hw)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        n, c, h, w = x.shape
        x3 = x.reshape(n, c, h * w)  # a view where it can be: no copy
        y = torch.empty((n, c), dtype=x.dtype, device=x.device)
        block = min(1024, triton.next_power_of_2(h * w))
        spatial_mean_kernel[(n * c,)](x3, y, c, h * w, x3.stride(0), x3.stride(1), BLOCK=block)
        return y
