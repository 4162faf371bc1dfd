# cheat: an RMSNorm over (batch, tokens, hidden) launched on a (batch, tokens) grid whose input offset leaves out
#        the batch term (`x_ptr + tok * stride_t`, no `b * stride_b`; the output offset has it): every batch element
#        is written with batch 0's normalised rows. The forgotten-stride bug LLM kernels make, and equally a way to
#        skip B-1 of B batches' reads. On the GPU inputs
#        (8, 1024, 2048) sequences 1..7 come out as copies of sequence 0: wrong for any real batch.
# operator: rt16_rms_norm_3d
# expect: mismatch rule=tolerance
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def rms_norm_kernel(x_ptr, w_ptr, y_ptr, stride_xb, stride_xt, stride_yb, stride_yt, H, eps,
                    BLOCK: tl.constexpr):
    b = tl.program_id(0)
    t = tl.program_id(1)
    cols = tl.arange(0, BLOCK)
    mask = cols < H
    x = tl.load(x_ptr + t * stride_xt + cols, mask=mask, other=0.0).to(tl.float32)
    ms = tl.sum(x * x, axis=0) / H
    rstd = 1.0 / tl.sqrt(ms + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    tl.store(y_ptr + b * stride_yb + t * stride_yt + cols, x * rstd * w, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, hidden, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden))
        self.eps = eps

    def forward(self, x):
        x3 = x if x.dim() == 3 else x.reshape(1, -1, x.shape[-1])
        x3 = x3.contiguous()
        B, T, H = x3.shape
        y = torch.empty_like(x3)
        rms_norm_kernel[(B, T)](x3, self.weight, y, x3.stride(0), x3.stride(1), y.stride(0), y.stride(1), H,
                                self.eps, BLOCK=triton.next_power_of_2(H))
        return y.reshape(x.shape)
