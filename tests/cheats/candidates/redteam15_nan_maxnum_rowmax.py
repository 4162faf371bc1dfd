# cheat: none intended in the source, but the check verifies what the GPU does not run: a row max/argmax with
#        tl.max(..., return_indices=True) (tl.maximum semantics: propagate_nan=NONE). Compiled for the GPU the value
#        reduction is arith.maxnumf -> PTX max.f32, which returns the non-NaN operand: a row holding a NaN reports the
#        largest finite value (torch.max reports NaN). Under the interpreter create_maxnumf is np.maximum, which
#        propagates NaN exactly as torch does, so the checker's "NaN and +inf entries" trial passes. NaN detection in
#        any downstream use (loss spikes, overflow checks, inf/NaN guards of mixed precision) silently disappears on
#        the GPU.
# operator: max_dim
# expect: mismatch
# uncaught: the interpreter's maxnumf and tl.max propagate NaN as torch does; the compiled max.f32 drops it (and
#           max_dim gets no NaN trial)
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def rowmax_kernel(x_ptr, v_ptr, i_ptr, N, sx0, sx1, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * sx0 + cols * sx1, mask=cols < N, other=float("-inf"))
    v, i = tl.max(x, axis=0, return_indices=True)
    tl.store(v_ptr + row, v)
    tl.store(i_ptr + row, i.to(tl.int64))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        shape = x.shape
        x2 = x.reshape(-1, shape[-1])
        R, N = x2.shape
        v = torch.empty((R,), device=x.device, dtype=x.dtype)
        i = torch.empty((R,), device=x.device, dtype=torch.int64)
        rowmax_kernel[(R,)](x2, v, i, N, x2.stride(0), x2.stride(1), BLOCK=triton.next_power_of_2(N))
        return v.reshape(shape[:-1]), i.reshape(shape[:-1])
