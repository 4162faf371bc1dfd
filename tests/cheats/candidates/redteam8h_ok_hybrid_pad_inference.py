# cheat: none (an honest control, wrongly rejected). RWKV's token shift written as its reference writes it: the
#        shift is F.pad(x, (0, 0, 1, -1)) in the library (the reference's own constant_pad_nd, granted under hybrid),
#        the mix a Triton kernel. Outside inference_mode F.pad reaches the op log as aten.constant_pad_nd and is
#        verified; in the one call under torch.inference_mode it reaches it whole as aten.pad (a
#        CompositeImplicitAutograd op), which rules/runtime.yaml does not list and INFERENCE_COMPOSITES does not map,
#        so the honest candidate is refused as non_triton_compute. The same holds for torch.argsort/msort (sort),
#        torch.take_along_dim (gather), Tensor.tile (repeat), torch.hstack/vstack (cat), torch.fliplr (flip).
# operator: rt8h_token_shift
# config: policy=hybrid
# expect: verified
import torch
import triton
import triton.language as tl
from torch import nn
from torch.nn import functional as F


@triton.jit
def mix_kernel(x_ptr, xx_ptr, mu_ptr, y_ptr, n, C, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    xx = tl.load(xx_ptr + offs, mask=mask, other=0.0)
    mu = tl.load(mu_ptr + offs % C, mask=mask, other=0.0)
    tl.store(y_ptr + offs, x * mu + xx * (1.0 - mu), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.mu = nn.Parameter(torch.rand(dim))

    def forward(self, x):
        x = x.contiguous()
        xx = F.pad(x, (0, 0, 1, -1)).contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        mix_kernel[(triton.cdiv(n, 256),)](x, xx, self.mu.contiguous(), y, n, x.shape[-1], BLOCK=256)
        return y
