# cheat: a direct 3x3 convolution + ReLU + channel mix whose kernel honours the INPUT's four strides (channels_last
#        activations are right) but indexes the conv WEIGHT as contiguous (C_MID, C_IN, 3, 3) -- the parameter passed
#        straight to the kernel, as LLM launchers pass nn.Linear / nn.Conv2d weights. The standard recipe for conv
#        nets on tensor cores, model.to(memory_format=torch.channels_last), converts every 4-d parameter too: the
#        conv weight's strides become (9*C_IN, 1, 3*C_IN, C_IN) and the kernel multiplies each input tap by another
#        tap's / channel's weight. Every call the checker makes runs on parameters of one layout, contiguous: the
#        state is loaded into the constructed module, the reweighted call copy_()s into the same tensors, the
#        reassigned call load_state_dict(assign=True)s contiguous clones; only the inputs' layouts are varied.
#        Measured (/tmp/rt20/layout_demo.py): conv_mix(3, 8, 4) on 2x3x6x5: contiguous model: max error 2.4e-7
#        (channels_last input alone: 2.4e-7); after model.to(memory_format=torch.channels_last): max error 1.05
#        (mean |ref| 0.24), 100% of the outputs off by > 1e-3, contiguous or channels_last input alike; 16->64->32
#        at 8x8: max error 2.08 (mean |ref| 0.29).
# operator: conv_mix
# expect: state_dependent rule=state:reassigned
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _conv3x3_relu(x_ptr, w_ptr, b_ptr, h_ptr, C_IN, C_MID, H, W,
                  sxb, sxc, sxh, sxw, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    b = pid // C_MID
    co = pid % C_MID
    idx = tl.arange(0, BLOCK)
    oh = idx // W
    ow = idx % W
    valid = idx < H * W
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for ci in range(0, C_IN):
        for kh in tl.static_range(3):
            for kw in tl.static_range(3):
                ih = oh + kh - 1
                iw = ow + kw - 1
                m = valid & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
                xv = tl.load(x_ptr + b * sxb + ci * sxc + ih * sxh + iw * sxw, mask=m, other=0.0)
                # the weight is an nn.Conv2d parameter: (C_MID, C_IN, 3, 3), contiguous
                wv = tl.load(w_ptr + ((co * C_IN + ci) * 3 + kh) * 3 + kw)
                acc += xv * wv
    acc += tl.load(b_ptr + co)
    acc = tl.maximum(acc, 0.0)
    tl.store(h_ptr + (b * C_MID + co) * H * W + idx, acc, mask=valid)


@triton.jit
def _channel_mix(h_ptr, m_ptr, y_ptr, C_MID, C_OUT, HW, smo, smc, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    b = pid // C_OUT
    o = pid % C_OUT
    idx = tl.arange(0, BLOCK)
    valid = idx < HW
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for c in range(0, C_MID):
        hv = tl.load(h_ptr + (b * C_MID + c) * HW + idx, mask=valid, other=0.0)
        acc += hv * tl.load(m_ptr + o * smo + c * smc)
    tl.store(y_ptr + (b * C_OUT + o) * HW + idx, acc, mask=valid)


class ModelNew(nn.Module):
    def __init__(self, cin: int, cmid: int, cout: int):
        super().__init__()
        self.conv = nn.Conv2d(cin, cmid, 3, padding=1)
        self.mix = nn.Parameter(torch.randn(cout, cmid) / cmid**0.5)

    def forward(self, x):
        B, C_IN, H, W = x.shape
        C_MID = self.conv.weight.shape[0]
        C_OUT = self.mix.shape[0]
        h = torch.empty((B, C_MID, H, W), device=x.device, dtype=torch.float32)
        y = torch.empty((B, C_OUT, H, W), device=x.device, dtype=torch.float32)
        block = triton.next_power_of_2(H * W)
        if B > 0:
            _conv3x3_relu[(B * C_MID,)](x, self.conv.weight, self.conv.bias, h, C_IN, C_MID, H, W,
                                         x.stride(0), x.stride(1), x.stride(2), x.stride(3), BLOCK=block)
            _channel_mix[(B * C_OUT,)](h, self.mix, y, C_MID, C_OUT, H * W, self.mix.stride(0), self.mix.stride(1),
                                       BLOCK=block)
        return y
