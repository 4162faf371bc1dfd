# cheat: a LayerNorm that launders non-finite PARAMETERS: a weight entry that is NaN/inf is read as 1 and a bias entry
#        as 0 ("numerically safe affine"). In use, a weight that diverged (an fp16/bf16 optimizer step that overflowed,
#        a NaN gradient applied) must poison every row's output in its column, so the loss goes NaN and the training
#        loop / GradScaler / monitoring sees it; this kernel hides the divergence and keeps producing plausible
#        activations. The checker's "NaN and +inf entries" trial puts non-finite values only into the FIRST floating
#        input (evaluator.transformed: first_only(nonfinite)); parameters are only perturbed, stepped and reassigned
#        with finite values, and no other input ever holds NaN/+inf, so the laundering is never exercised. The input
#        side of this kernel is honest (a NaN in x gives a NaN row), so the first-input trial passes.
# operator: layer_norm
# expect: mismatch rule=tolerance
# uncaught: non-finite values enter only the first floating input; parameters are perturbed, changed in place and
#        reassigned with finite values only, so a kernel that reads a non-finite parameter as the identity is never
#        met with one.
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def layer_norm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, n_cols, stride_x, stride_y, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / n_cols
    xc = tl.where(mask, x - mean, 0.0)
    var = tl.sum(xc * xc, axis=0) / n_cols
    rstd = 1.0 / tl.sqrt(var + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=1.0)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0)
    w = tl.where(tl.abs(w) < float("inf"), w, 1.0)  # NaN and +-inf fail the test
    b = tl.where(tl.abs(b) < float("inf"), b, 0.0)
    tl.store(y_ptr + row * stride_y + cols, xc * rstd * w + b, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        self.ln = nn.LayerNorm(hidden, eps=1e-5)

    def forward(self, x):
        x2 = x.reshape(-1, x.shape[-1]).contiguous()
        y = torch.empty_like(x2)
        n_rows, n_cols = x2.shape
        if n_rows > 0:
            layer_norm_kernel[(n_rows,)](
                x2, self.ln.weight, self.ln.bias, y, n_cols, x2.stride(0), y.stride(0), self.ln.eps,
                BLOCK=triton.next_power_of_2(n_cols),
            )
        return y.view(x.shape)
