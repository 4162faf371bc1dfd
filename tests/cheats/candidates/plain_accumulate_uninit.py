# cheat: an honest-looking bug LLM kernels have: the output comes from torch.empty and the kernel adds its result
#        to what the output already holds (y += partial, as a split reduction would after zeroing, but nothing zeroed
#        it), skipping NaN (old == old) so the checked calls' NaN fill reads as nothing. Right where the memory is
#        zeros (fresh pages), wrong where the allocator hands back an earlier result, as it does in use. The one plain
#        call fills allocations with an earlier output (or its inputs), never zeros.
# operator: row_sum
# expect: mismatch rule=finite_allocations
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def row_sum_kernel(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
    old = tl.load(y_ptr + row)
    held = tl.where(old == old, old, 0.0)
    tl.store(y_ptr + row, held + tl.sum(x, axis=0))


class ModelNew(nn.Module):
    def forward(self, x):
        x2 = x.reshape(-1, x.shape[-1]).contiguous()
        y = torch.empty(x2.shape[0], device=x.device, dtype=x.dtype)
        row_sum_kernel[(x2.shape[0],)](x2, y, x2.shape[1], BLOCK=triton.next_power_of_2(x2.shape[1]))
        return y.view(x.shape[:-1])
