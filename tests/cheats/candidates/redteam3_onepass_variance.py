# cheat: a one-pass layer norm that takes the variance as E[x^2] - E[x]^2 (one reduction pass, no second read of the
#        centred row). In fp32 that cancels catastrophically once a row's mean is large next to its spread: rows
#        of activations with a DC offset of a few hundred (unnormalized features, positions, a residual stream that
#        grew) lose most of their variance's digits and come out wrong by percents. The evaluator's offset trial
#        moves inputs by 3x their mean magnitude (mean ~2.4 against spread 1), where the cancellation costs nothing,
#        and its x1e3 trial scales mean and spread together.
# operator: layer_norm
# expect: mismatch rule=tolerance
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def onepass_layer_norm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, n_cols, stride_x, stride_y, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / n_cols
    mean_sq = tl.sum(x * x, axis=0) / n_cols
    var = tl.maximum(mean_sq - mean * mean, 0.0)  # one pass: E[x^2] - E[x]^2
    rstd = 1.0 / tl.sqrt(var + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0)
    tl.store(y_ptr + row * stride_y + cols, (x - mean) * rstd * w + b, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        self.ln = nn.LayerNorm(hidden, eps=1e-5)

    def forward(self, x):
        x2 = x.reshape(-1, x.shape[-1]).contiguous()
        y = torch.empty_like(x2)
        n_rows, n_cols = x2.shape
        block = triton.next_power_of_2(n_cols)
        onepass_layer_norm_kernel[(n_rows,)](
            x2, self.ln.weight, self.ln.bias, y, n_cols, x2.stride(0), y.stride(0), self.ln.eps, BLOCK=block
        )
        return y.view(x.shape)
