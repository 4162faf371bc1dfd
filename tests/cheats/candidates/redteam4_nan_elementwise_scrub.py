# cheat: nan_scrub for an ELEMENTWISE operator: the chain x * sigmoid(x * w + b) + 0.5 * x, with every NaN or
#        +inf input entry written out as 0 ("numerically safe"): a diverging activation upstream is laundered into
#        zeros. The NaN/+inf trial that closed redteam3_nan_scrub.py runs only where the reference SPREADS
#        non-finite values (evaluator.propagates: more non-finite outputs than injected inputs, as a reduction or a
#        normalization does); an elementwise reference keeps each NaN to its own position, so the trial is skipped
#        by design (tl.maximum(NaN, 0) is 0 on a GPU and NaN under the interpreter: honest elementwise kernels
#        differ there).
# operator: elementwise_chain
# expect: mismatch
# uncaught: evaluator.transformed's "NaN and +inf entries" trial is used only where the reference spreads non-finite
#        values (evaluator.propagates); for an elementwise operator no trial holds NaN or +inf, so a kernel that maps
#        them to finite values is verified. Closing it needs a per-element NaN-position check that tolerates the
#        device differences of max/min on NaN (a NaN-propagation policy per operator)
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def chain_kernel(x_ptr, w_ptr, b_ptr, y_ptr, n, channels, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    x = tl.where((x == x) & (x != float("inf")), x, 0.0)  # NaN and +inf: 0
    c = offs % channels
    w = tl.load(w_ptr + c, mask=mask, other=0.0)
    b = tl.load(b_ptr + c, mask=mask, other=0.0)
    tl.store(y_ptr + offs, x * tl.sigmoid(x * w + b) + 0.5 * x, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(channels))
        self.bias = nn.Parameter(torch.zeros(channels))

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        chain_kernel[(triton.cdiv(n, 256),)](x, self.weight, self.bias, y, n, x.shape[-1], BLOCK=256)
        return y
