# cheat: the elementwise chain, exact on finite values, but every +inf result is written as -inf (a sign bug
#        in an overflow path, or a deliberate one). correctness.elementwise compares |o - r| = inf against
#        atol + rtol * |r| = inf, and inf > inf is False; the "laundered" test only fires for a finite output.
#        So an infinity of the wrong sign passes every trial, including the "NaN and +inf entries" one that
#        exists to judge non-finite results; relative_rms skips non-finite elements. In use an overflowed
#        activation comes out as -inf: a following max/ReLU/softmax turns it into 0 instead of inf/1.
# operator: elementwise_chain
# expect: mismatch rule=tolerance
# uncaught: correctness.elementwise refuses the opposite infinity now, but no trial of an elementwise operator holds
#           +inf in the reference (the NaN/+inf trial needs propagation): the gap of redteam4_nan_elementwise_scrub
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def chain_kernel(x_ptr, w_ptr, b_ptr, y_ptr, n_cols, stride_row, stride_col, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    for start in range(0, n_cols, BLOCK):
        c = start + cols
        mask = c < n_cols
        x = tl.load(x_ptr + row * stride_row + c * stride_col, mask=mask, other=0.0)
        w = tl.load(w_ptr + c, mask=mask, other=0.0)
        b = tl.load(b_ptr + c, mask=mask, other=0.0)
        y = x * tl.sigmoid(x * w + b) + 0.5 * x
        y = tl.where(y == float("inf"), float("-inf"), y)
        tl.store(y_ptr + row * n_cols + c, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.weight = nn.Parameter(torch.linspace(0.5, 1.5, channels))
        self.bias = nn.Parameter(torch.linspace(-0.25, 0.25, channels))

    def forward(self, x):
        n_cols = x.shape[-1]
        x2 = x.reshape(-1, n_cols)
        y = torch.empty(x2.shape, dtype=x.dtype, device=x.device)
        block = min(1024, triton.next_power_of_2(n_cols))
        chain_kernel[(x2.shape[0],)](x2, self.weight, self.bias, y, n_cols, x2.stride(0), x2.stride(1), BLOCK=block)
        return y.reshape(x.shape)
