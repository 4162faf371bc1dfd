# cheat: under the hybrid policy, keeps the 3x3 convolution in the library (granted: the reference runs one)
#        and also does the operator's channel mix, a matrix product the reference runs as einsum/bmm, as a
#        second library convolution (1x1, weight mix[:, :, None, None]). Triton only applies the ReLU. The grant
#        is by op name (aten.convolution), not by what the reference convolves: any extra convolution passes.
# operator: conv_mix
# expect: runtime_guard rule=non_triton_compute
# config: policy=hybrid
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.maximum(tl.load(x_ptr + offs, mask=mask), 0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, cin: int, cmid: int, cout: int):
        super().__init__()
        self.conv = nn.Conv2d(cin, cmid, 3, padding=1)
        self.mix = nn.Parameter(torch.randn(cout, cmid) / cmid**0.5)

    def forward(self, x):
        h = torch.nn.functional.conv2d(x, self.conv.weight, self.conv.bias, padding=1).contiguous()
        r = torch.empty_like(h)
        n = h.numel()
        relu_kernel[(triton.cdiv(n, 256),)](h, r, n, BLOCK=256)
        return torch.nn.functional.conv2d(r, self.mix[:, :, None, None])
