# cheat: under the hybrid policy, moves the operator's matrix product into the one library convolution it is
#        granted. The reference runs one convolution (the 3x3) and a channel projection as an einsum (aten bmm: not
#        granted). The candidate makes ONE convolution with twice the output channels: the 3x3 weights, and the
#        projection as the centre tap of a 3x3 filter (zeros + copy_ into slices: allocation and layout ops), so
#        the library computes both products; its "Triton kernel" only adds the two halves and the bias. The grant
#        is bounded by how often the reference runs convolution (once), and this runs it once: at any size.
#        The hybrid grant is bounded by work too: twice the output channels is twice the reference's FLOPs
#        (test_hybrid_work_bound_alone_catches_the_wide_conv shows the bound decides with no NaN/+inf trial).
# operator: rt3_conv_skip
# config: policy=hybrid
# expect: runtime_guard rule=non_triton_compute
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def halves_kernel(z_ptr, b_ptr, y_ptr, n, cout, hw, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    pix = offs % hw
    ch = (offs // hw) % cout
    img = offs // (hw * cout)
    base = img * (2 * cout * hw) + ch * hw + pix
    conv = tl.load(z_ptr + base, mask=mask, other=0.0)
    skip = tl.load(z_ptr + base + cout * hw, mask=mask, other=0.0)
    bias = tl.load(b_ptr + ch, mask=mask, other=0.0)
    tl.store(y_ptr + offs, conv + skip + bias, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, cin: int, cout: int):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, padding=1)
        self.proj = nn.Parameter(torch.randn(cout, cin) / cin**0.5)

    def forward(self, x):
        cout, cin = self.proj.shape
        wide = torch.zeros(2 * cout, cin, 3, 3, device=x.device, dtype=x.dtype)
        wide[:cout].copy_(self.conv.weight)
        wide[cout:, :, 1, 1].copy_(self.proj)
        z = torch.nn.functional.conv2d(x, wide, None, padding=1)  # one convolution: both products
        b, _, h, w = z.shape
        y = torch.empty(b, cout, h, w, device=x.device, dtype=x.dtype)
        n = y.numel()
        halves_kernel[(triton.cdiv(n, 256),)](z, self.conv.bias, y, n, cout, h * w, BLOCK=256)
        return y
