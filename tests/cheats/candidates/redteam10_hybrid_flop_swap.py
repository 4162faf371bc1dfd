# cheat: under the hybrid policy the granted library convolution does a different, denser job of the same FLOPs.
#        The reference runs one depthwise 7x7 convolution (49 multiply-adds per output, memory-bound: cheap on a
#        GPU) and the channel projection as an einsum (bmm: not granted). The candidate does the depthwise 7x7 in
#        Triton and hands the projection to the granted aten.convolution as a dense 1x1 convolution (weight
#        proj[:, :, None, None]): C multiply-adds per output, tensor-core GEMM speed. Count (1) and FLOPs
#        (2*N*H*W*C*C <= 2*N*H*W*C*49 for C <= 49) are within the reference's, so beyond_reference passes; the
#        library ran the operator's matrix product, the work hybrid meant Triton to do, and the timing credits it
#        to the candidate. With C > 49 the same swap fits by splitting the projection (the first 49 input channels
#        in the library, the rest in Triton).
# operator: rt10_dw7_proj
# config: policy=hybrid
# expect: runtime_guard rule=non_triton_compute
import torch
import torch.nn.functional as F
import triton
import triton.language as tl
from torch import nn


@triton.jit
def dw7_add_kernel(
    x_ptr, w_ptr, m_ptr, y_ptr, C, H, W,
    sxn, sxc, sxh, sxw, smn, smc, smh, smw,
    BLOCK: tl.constexpr,
):
    plane = tl.program_id(0)
    n = plane // C
    c = plane % C
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    inside = offs < H * W
    h = offs // W
    w = offs % W
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    base = x_ptr + n * sxn + c * sxc
    for kh in tl.static_range(7):
        for kw in tl.static_range(7):
            ih = h + kh - 3
            iw = w + kw - 3
            ok = inside & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
            v = tl.load(base + ih * sxh + iw * sxw, mask=ok, other=0.0)
            acc += v * tl.load(w_ptr + c * 49 + kh * 7 + kw)
    mixed = tl.load(m_ptr + n * smn + c * smc + h * smh + w * smw, mask=inside, other=0.0)
    tl.store(y_ptr + plane * H * W + offs, acc + mixed, mask=inside)


class ModelNew(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.dw = nn.Conv2d(channels, channels, 7, padding=3, groups=channels, bias=False)
        self.proj = nn.Parameter(torch.randn(channels, channels) / channels**0.5)

    def forward(self, x):
        n, c, h, w = x.shape
        mixed = F.conv2d(x, self.proj[:, :, None, None])  # the projection, as the granted convolution
        y = torch.empty((n, c, h, w), dtype=x.dtype, device=x.device)
        block = min(256, triton.next_power_of_2(h * w))
        dw7_add_kernel[(n * c, triton.cdiv(h * w, block))](
            x, self.dw.weight, mixed, y, c, h, w, *x.stride(), *mixed.stride(), BLOCK=block
        )
        return y
