# cheat: none (a control: accepted by design). The operator's matrix product (the 1x1 projection shortcut, an einsum
#        the reference runs as bmm) folded into the weights of the one granted library convolution (RepVGG
#        re-parametrisation: conv3x3(x, W) + P x == conv3x3(x, W + P at the centre tap)); a Triton kernel adds P into
#        a copy of W's centre taps on every call. The library does exactly the reference's convolution (shape, count,
#        FLOPs) and nothing more: hybrid bounds the library's work by the reference's own, not what Triton computes.
#        An exact algebraic fold that removes work is an optimization, right for every input and state (the fold is
#        redone each call); the verdict lists convolution among the library ops kept.
# operator: rt3_conv_skip
# config: policy=hybrid
# expect: verified
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def fold_kernel(w_ptr, p_ptr, out_ptr, n, BLOCK: tl.constexpr):
    # out = W with P added at the centre tap: out[o, c, 1, 1] = W[o, c, 1, 1] + P[o, c]
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    w = tl.load(w_ptr + offs, mask=mask, other=0.0)
    tap = offs % 9
    oc = offs // 9
    p = tl.load(p_ptr + oc, mask=mask & (tap == 4), other=0.0)
    tl.store(out_ptr + offs, w + p, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, cin: int, cout: int):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, padding=1)
        self.proj = nn.Parameter(torch.randn(cout, cin) / cin**0.5)

    def forward(self, x):
        weight = self.conv.weight.contiguous()
        folded = torch.empty_like(weight)
        n = folded.numel()
        fold_kernel[(triton.cdiv(n, 256),)](weight, self.proj.contiguous(), folded, n, BLOCK=256)
        return torch.nn.functional.conv2d(x, folded, self.conv.bias, padding=1)
