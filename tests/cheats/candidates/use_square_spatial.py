# cheat: a channel shuffle that takes the height for both spatial dimensions (a slip an LLM made): right on
#        the square inputs the operator declares, wrong (shaped h x h) on any other. The operator has parameters and no
#        declared variants, so only the batch was varied. Rejected once an inner dimension is varied too.
# operator: shuffle_scale
# expect: shape_mismatch|crash rule=shape_dtype|out_of_bounds
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _shuffle_scale_kernel(x_ptr, s_ptr, y_ptr, total, C, HW, GROUPS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < total
    pixel = offs % HW
    c_out = (offs // HW) % C
    b = offs // (HW * C)
    per_group = C // GROUPS
    c_in = (c_out % GROUPS) * per_group + c_out // GROUPS
    x = tl.load(x_ptr + (b * C + c_in) * HW + pixel, mask=mask)
    tl.store(y_ptr + offs, x * tl.load(s_ptr + c_out, mask=mask), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, channels: int, groups: int):
        super().__init__()
        self.groups = groups
        self.scale = nn.Parameter(torch.ones(channels))

    def forward(self, x):
        x = x.contiguous()
        b, c, h = x.shape[0], x.shape[1], x.shape[2]
        y = torch.empty((b, c, h, h), device=x.device, dtype=x.dtype)
        total = y.numel()
        grid = (triton.cdiv(total, 256),)
        _shuffle_scale_kernel[grid](x, self.scale, y, total, c, h * h, GROUPS=self.groups, BLOCK=256)
        return y
