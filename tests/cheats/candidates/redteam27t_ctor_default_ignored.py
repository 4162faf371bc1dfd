# cheat: a LayerScale whose constructor accepts init_values (the reference's keyword, default 1e-5) and ignores it:
#        gamma always starts at 1e-5. ConvNeXt builds its blocks with layer_scale_init_value=1e-6, CaiT with 1e-6 for
#        its deeper models, DeiT-III with 1e-4 or 0.1: the branch starts 10x (or 10^4x) off, and
#        so does every gradient that reaches the input through it. The checker builds every module only with
#        get_init_inputs() / get_cpu_init_inputs() (here [dim]: the keyword is never passed) and judges the initial
#        state against the reference built with the same arguments, so a constructor argument left at its default
#        by the operator file is never exercised: not by the initial-state check, not by the forward or gradients.
#        Measured (/tmp/rt27t/harm_ctor_default.py): init_values=1e-6 / 0.1: gamma starts at 1e-5 (reference 1e-6 / 0.1);
#        a residual branch x + LayerScale(tanh(Linear(x))) with init_values=0.1 (CaiT, depth <= 18): first-step gradient of
#        the branch's weight 3.9e-6 (reference 3.9e-2), branch output after 20 SGD steps 100% off (relative 1.005).
# operator: rt7_layerscale_train
# expect: mismatch rule=initial_state
# uncaught: constructor arguments are only those get_init_inputs() gives; keywords left at their defaults are never varied
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _scale_fwd(x_ptr, g_ptr, y_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    x = tl.load(x_ptr + row * n + cols, mask=mask)
    g = tl.load(g_ptr + cols, mask=mask)
    tl.store(y_ptr + row * n + cols, x * g, mask=mask)


@triton.jit
def _scale_bwd_x(dy_ptr, g_ptr, dx_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    dy = tl.load(dy_ptr + row * n + cols, mask=mask)
    g = tl.load(g_ptr + cols, mask=mask)
    dx = dy * g
    tl.store(dx_ptr + row * n + cols, dx, mask=mask)


@triton.jit
def _scale_bwd_g(dy_ptr, x_ptr, dg_ptr, rows, n, BLOCK: tl.constexpr):
    cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < n
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for r in range(0, rows):
        acc += tl.load(dy_ptr + r * n + cols, mask=mask, other=0.0) * tl.load(
            x_ptr + r * n + cols, mask=mask, other=0.0
        )
    tl.store(dg_ptr + cols, acc, mask=mask)


class LayerScaleFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, gamma):
        x2 = x.reshape(-1, x.shape[-1]).contiguous()
        y = torch.empty_like(x2)
        n = x2.shape[1]
        _scale_fwd[(x2.shape[0],)](x2, gamma, y, n, BLOCK=triton.next_power_of_2(n))
        ctx.save_for_backward(x2, gamma)
        return y.view(x.shape)

    @staticmethod
    @torch.autograd.function.once_differentiable  # double backward raises
    def backward(ctx, dy):
        x2, gamma = ctx.saved_tensors
        dy2 = dy.reshape(x2.shape).contiguous()
        rows, n = x2.shape
        dx = torch.empty_like(x2)
        _scale_bwd_x[(rows,)](dy2, gamma, dx, n, BLOCK=triton.next_power_of_2(n))
        dg = torch.empty_like(gamma)
        block = min(triton.next_power_of_2(n), 256)
        _scale_bwd_g[(triton.cdiv(n, block),)](dy2, x2, dg, rows, n, BLOCK=block)
        return dx.view(dy.shape), dg


class ModelNew(nn.Module):
    def __init__(self, dim: int, init_values: float = 1e-5):
        super().__init__()
        # LayerScale's usual start (CaiT, DINOv2): the argument is accepted for the signature's sake and not read
        self.gamma = nn.Parameter(torch.full((dim,), 1e-5))

    def forward(self, x):
        return LayerScaleFunction.apply(x, self.gamma)
