# cheat: a training operator's backward computes the projection's weight gradient (dP = sum over batch and length of
#        dy x^T, the backward's matrix product) as one library convolution (x as C images of B channels, dy as O
#        filters spanning the whole length), its FLOPs 2*B*C*O*L, C/3 times the reference's depthwise convolution.
#        The forward is honest (library depthwise convolution, Triton projection). The gradient check's records
#        reach runtime_guard with trial=None ("no forward's work"), so beyond_reference checks only the count (one
#        convolution, as the reference) and never the work: any granted op in a backward (or a gradient-check
#        forward) may do unbounded work.
# operator: rt8h_dwconv_proj_train
# config: policy=hybrid
# expect: runtime_guard rule=non_triton_compute
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def fwd_kernel(c_ptr, x_ptr, p_ptr, y_ptr, n, C, L, BLOCK: tl.constexpr):
    # y[b, o, l] = c[b, o, l] + sum_c P[o, c] x[b, c, l]
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    l = offs % L
    o = (offs // L) % C
    b = offs // (L * C)
    acc = tl.load(c_ptr + offs, mask=mask, other=0.0)
    for k in range(0, C):
        xv = tl.load(x_ptr + b * C * L + k * L + l, mask=mask, other=0.0)
        pv = tl.load(p_ptr + o * C + k, mask=mask, other=0.0)
        acc += xv * pv
    tl.store(y_ptr + offs, acc, mask=mask)


@triton.jit
def dx_kernel(dy_ptr, p_ptr, w_ptr, dx_ptr, n, C, L, BLOCK: tl.constexpr):
    # dx[b, c, l] = sum_o P[o, c] dy[b, o, l] + sum_k w[c, k] dy[b, c, l + 1 - k]
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    l = offs % L
    c = (offs // L) % C
    b = offs // (L * C)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for o in range(0, C):
        acc += tl.load(dy_ptr + b * C * L + o * L + l, mask=mask, other=0.0) * tl.load(
            p_ptr + o * C + c, mask=mask, other=0.0
        )
    for k in range(0, 3):
        src = l + 1 - k
        ok = mask & (src >= 0) & (src < L)
        acc += tl.load(dy_ptr + b * C * L + c * L + src, mask=ok, other=0.0) * tl.load(
            w_ptr + c * 3 + k, mask=mask, other=0.0
        )
    tl.store(dx_ptr + offs, acc, mask=mask)


@triton.jit
def dw_kernel(dy_ptr, x_ptr, dw_ptr, B, C, L, BLOCK: tl.constexpr):
    # dw[c, k] = sum_{b, l} dy[b, c, l] x[b, c, l + k - 1]; one program per (c, k)
    pid = tl.program_id(0)
    c = pid // 3
    k = pid % 3
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for b in range(0, B):
        for start in range(0, L, BLOCK):
            l = start + tl.arange(0, BLOCK)
            src = l + k - 1
            ok = (l < L) & (src >= 0) & (src < L)
            acc += tl.load(dy_ptr + b * C * L + c * L + l, mask=l < L, other=0.0) * tl.load(
                x_ptr + b * C * L + c * L + src, mask=ok, other=0.0
            )
    tl.store(dw_ptr + pid, tl.sum(acc, axis=0))


class Mixer(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w, p):
        x = x.contiguous()
        w = w.contiguous()
        p = p.contiguous()
        conv = torch.nn.functional.conv1d(x, w, None, padding=1, groups=w.shape[0])  # as the reference
        y = torch.empty_like(conv)
        B, C, L = x.shape
        n = y.numel()
        fwd_kernel[(triton.cdiv(n, 128),)](conv, x, p, y, n, C, L, BLOCK=128)
        ctx.save_for_backward(x, w, p)
        return y

    @staticmethod
    def backward(ctx, dy):
        if torch.is_grad_enabled():  # create_graph=True: refused loudly, as the product's own kernels do
            raise RuntimeError("double backward is not supported")
        x, w, p = ctx.saved_tensors
        dy = dy.contiguous()
        B, C, L = x.shape
        # the backward's matrix product, as a library convolution: (C, B, L) images by (O, B, L) filters
        dpt = torch.nn.functional.conv1d(x.transpose(0, 1), dy.transpose(0, 1))  # (C, O, 1) = dP^T
        dp = dpt[:, :, 0].t().contiguous()
        dx = torch.empty_like(x)
        n = dx.numel()
        dx_kernel[(triton.cdiv(n, 128),)](dy, p, w, dx, n, C, L, BLOCK=128)
        dw = torch.empty(C * 3, device=x.device, dtype=x.dtype)
        dw_kernel[(C * 3,)](dy, x, dw, B, C, L, BLOCK=64)
        return dx, dw.view(C, 1, 3), dp


class ModelNew(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.dw = nn.Conv1d(channels, channels, 3, padding=1, groups=channels, bias=False)
        self.proj = nn.Parameter(torch.randn(channels, channels) / channels**0.5)

    def forward(self, x):
        return Mixer.apply(x, self.dw.weight, self.proj)
