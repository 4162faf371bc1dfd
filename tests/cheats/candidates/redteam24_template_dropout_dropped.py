# cheat: (a product bug, not written by hand) the template writer's own output for rt20_affine_dropout_train, rendered
#        unchanged by TemplateWriter().render(load_operator('tests/cheats/operators/rt20_affine_dropout_train.py').spec,
#        {}): the captured graph holds aten.mul and aten.add only, so the generated ModelNew computes
#        x * weight + bias in train mode as in eval mode: dropout is never applied, while it trains. Measured
#        (/tmp/rt24/demo/drop_demo.py, TRITON_INTERPRET=1, 64 x 32, state loaded from Model(32)): in train mode the
#        reference's output has 24.7% zeros (p = 0.25, survivors scaled by 4/3), the generated module's 0.0%, and
#        its output equals the reference's eval-mode output (torch.allclose True). A model trained with it gets no
#        dropout regularisation and, at eval time, activations the train-time statistics never saw. The template
#        writer now refuses a training operator whose train-mode graph differs from its eval-mode one
#        (codegen/training.mode_dependent); this file keeps the evaluator's side of the gap open.
# operator: rt20_affine_dropout_train
# expect: mismatch
# uncaught: an operator whose reference is random in train mode is never called in train mode (as for
#           redteam20_dropout_fixed_seed.py): a module without dropout matches the reference in every call judged,
#           and the template writer, which captures the forward in eval mode, relies on the evaluator to catch it.
"""Mul + add in Triton, forward and backward: a Kernel Foundry kernel for
tests/cheats/operators/rt20_affine_dropout_train.py::Model.

Forward: fuses aten.mul, aten.add into 1 launcher(s) (rt20_affine_dropout_train_forward). Backward: the gradients of
x, weight, bias from the upstream gradient (grad_y) in 2 launcher(s) (rt20_affine_dropout_train_bwd_col0,
rt20_affine_dropout_train_bwd_col1), also Triton kernels.
Saved for the backward: x, weight, bias only (the backward recomputes every forward value it reads).
Computes in fp32 and stores torch.float32 (precision class fp32). `ModelNew` keeps the operator's constructor,
parameters and buffers, so its state_dict loads as is.
Double backward is not supported: a backward asked to build its own graph (create_graph=True) raises.

Written by the template writer; its forward and its gradients (of the inputs and the parameters, from random upstream
gradients) verified against the operator's autograd and timed by the Foundry evaluator (the pull request's report
says on which GPU and how).
Launch settings (the search's genes): col.BLOCK_I=128, col.BLOCK_R=32, col.num_warps=4, col.split=1,
plan.merge_reductions=True, pointwise.BLOCK_SIZE=1024, pointwise.layout=rows, pointwise.num_warps=4.
"""

import math

import torch
import triton
import triton.language as tl
from torch import nn


def broadcast_shape(*shapes):
    """The shape the operands broadcast to (torch.broadcast_shapes' result, without its symbolic-shape checks)."""
    if all(s == shapes[0] for s in shapes):
        return shapes[0]
    rank = max(len(s) for s in shapes)
    out = []
    for i in range(rank):
        size = 1
        for s in shapes:
            d = s[i - rank + len(s)] if i >= rank - len(s) else 1
            if d != 1:
                if size not in (1, d):
                    raise ValueError(f"shapes {list(shapes)} do not broadcast")
                size = d
        out.append(size)
    return torch.Size(out)


def cdiv(a, b):
    """Ceiling division of two host integers (a grid size)."""
    return -(-a // b)


def next_power_of_2(n):
    """The smallest power of two >= n, for n >= 1 (a block size)."""
    return 1 << (n - 1).bit_length()


def group_step(strides, shape, first, last):
    """The step of the flat index over dims first..last: the stride of the innermost dim longer than 1 (0 if none)."""
    for k in range(last, first - 1, -1):
        if shape[k] > 1:
            return strides[k]
    return 0


@triton.jit
def _rt20_affine_dropout_train_fwd_kernel(
    x_ptr, weight_ptr, bias_ptr, y_ptr, numel, size1, inner1, weight_s1, bias_s1, BLOCK: tl.constexpr
):
    """Mul + add: elementwise.

    Fuses aten.mul, aten.add.
    Computes:
        mul = x * weight
        y = mul + bias
    """
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < numel
    coord1 = (offs // inner1) % size1
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    weight = tl.load(weight_ptr + coord1 * weight_s1, mask=mask, other=0.0).to(tl.float32)
    bias = tl.load(bias_ptr + coord1 * bias_s1, mask=mask, other=0.0).to(tl.float32)
    mul = x * weight
    y = mul + bias
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _rt20_affine_dropout_train_rows_fwd_kernel(
    x_ptr, weight_ptr, bias_ptr, y_ptr, C, weight_s1, bias_s1, BLOCK: tl.constexpr
):
    """Mul + add: one program per (row of the leading dims, block of the last dims).

    Same math as _rt20_affine_dropout_train_fwd_kernel.
    """
    # one program per (row of the leading dims, block of the last dims): broadcast indices per row
    row = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < C
    offs = row.to(tl.int64) * C + cols
    coord1 = cols
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    weight = tl.load(weight_ptr + coord1 * weight_s1, mask=mask, other=0.0).to(tl.float32)
    bias = tl.load(bias_ptr + coord1 * bias_s1, mask=mask, other=0.0).to(tl.float32)
    mul = x * weight
    y = mul + bias
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def rt20_affine_dropout_train_forward(x, weight, bias):
    """Launch elementwise; returns y.

    Assumes: x (2-d torch.float32), weight (1-d torch.float32), bias (1-d torch.float32) on one device;
    non-contiguous operands are copied contiguous here; outputs are new contiguous tensors.
    """
    shape = broadcast_shape(x.shape, weight.shape, bias.shape)
    x = x.contiguous()
    weight = weight.contiguous()
    bias = bias.contiguous()
    y = torch.empty(shape, device=x.device, dtype=torch.float32)
    numel = math.prod(shape)
    size1 = math.prod(shape[-1:])
    inner1 = 1
    weight_s1 = 1
    bias_s1 = 1
    C = math.prod(shape[-1:])
    if C >= 512 and cdiv(C, 1024) < 65536:
        grid = (numel // C, cdiv(C, 1024))
        _rt20_affine_dropout_train_rows_fwd_kernel[grid](
            x, weight, bias, y, C, weight_s1, bias_s1, BLOCK=1024, num_warps=4
        )
    else:
        _rt20_affine_dropout_train_fwd_kernel[(cdiv(numel, 1024),)](
            x, weight, bias, y, numel, size1, inner1, weight_s1, bias_s1, BLOCK=1024, num_warps=4
        )
    return y


@triton.jit
def _rt20_affine_dropout_train_bwd_col0_kernel(
    grad_y_ptr, total_ptr, R, INNER, BLOCK_R: tl.constexpr, BLOCK_I: tl.constexpr
):
    """Sum: a reduction over middle dims (programs own strips of the inner dims).

    Fuses aten.sum.
    Computes (sum, max, … reduce the middle dims):
        total = sum(grad_y)
    """
    pid = tl.program_id(0)
    n_inner = tl.cdiv(INNER, BLOCK_I)
    outer = pid // n_inner
    inner = (pid % n_inner) * BLOCK_I + tl.arange(0, BLOCK_I)[None, :]
    inner_mask = inner < INNER
    base = outer.to(tl.int64) * R * INNER
    total_acc = tl.full([BLOCK_R, BLOCK_I], 0.0, dtype=tl.float32)
    for start in range(0, R, BLOCK_R):
        red = start + tl.arange(0, BLOCK_R)[:, None]
        mask = (red < R) & inner_mask
        offs = base + red * INNER + inner
        grad_y = tl.load(grad_y_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        total_acc += tl.where(mask, grad_y, 0.0)
    total = tl.sum(total_acc, axis=0, keep_dims=True)
    tl.store(total_ptr + outer.to(tl.int64) * INNER + inner, total.to(total_ptr.dtype.element_ty), mask=inner_mask)


def rt20_affine_dropout_train_bwd_col0(grad_y):
    """Launch the backward's a reduction over middle dims (programs own strips of the inner dims); returns total.

    Assumes: grad_y (2-d torch.float32) on one device; non-contiguous operands are copied contiguous here; outputs
    are new contiguous tensors.
    """
    grad_y = grad_y.contiguous()
    shape = grad_y.shape
    OUTER = math.prod(shape[:0])
    R = math.prod(shape[0:1])
    INNER = math.prod(shape[1:])
    total = torch.empty(tuple(shape[:0]) + (1,) + tuple(shape[1:]), device=grad_y.device, dtype=torch.float32)
    block_i = min(128, next_power_of_2(INNER))
    grid = (OUTER * cdiv(INNER, block_i),)
    _rt20_affine_dropout_train_bwd_col0_kernel[grid](grad_y, total, R, INNER, BLOCK_R=32, BLOCK_I=block_i, num_warps=4)
    return total


@triton.jit
def _rt20_affine_dropout_train_bwd_col1_kernel(
    grad_y_ptr,
    x_ptr,
    weight_ptr,
    grad_x_ptr,
    total_2_ptr,
    R,
    INNER,
    weight_so,
    weight_sr,
    weight_si,
    BLOCK_R: tl.constexpr,
    BLOCK_I: tl.constexpr,
):
    """Mul + sum: a reduction over middle dims (programs own strips of the inner dims).

    Fuses aten.mul, aten.sum.
    Computes (sum, max, … reduce the middle dims):
        mul_2 = grad_y * x
        grad_x = grad_y * weight
        total_2 = sum(mul_2)
    """
    pid = tl.program_id(0)
    n_inner = tl.cdiv(INNER, BLOCK_I)
    outer = pid // n_inner
    inner = (pid % n_inner) * BLOCK_I + tl.arange(0, BLOCK_I)[None, :]
    inner_mask = inner < INNER
    base = outer.to(tl.int64) * R * INNER
    total_2_acc = tl.full([BLOCK_R, BLOCK_I], 0.0, dtype=tl.float32)
    for start in range(0, R, BLOCK_R):
        red = start + tl.arange(0, BLOCK_R)[:, None]
        mask = (red < R) & inner_mask
        offs = base + red * INNER + inner
        grad_y = tl.load(grad_y_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        weight = tl.load(
            weight_ptr + outer.to(tl.int64) * weight_so + red * weight_sr + inner * weight_si, mask=mask, other=0.0
        ).to(tl.float32)
        mul_2 = grad_y * x
        grad_x = grad_y * weight
        total_2_acc += tl.where(mask, mul_2, 0.0)
        tl.store(grad_x_ptr + offs, grad_x.to(grad_x_ptr.dtype.element_ty), mask=mask)
    total_2 = tl.sum(total_2_acc, axis=0, keep_dims=True)
    tl.store(
        total_2_ptr + outer.to(tl.int64) * INNER + inner, total_2.to(total_2_ptr.dtype.element_ty), mask=inner_mask
    )


def rt20_affine_dropout_train_bwd_col1(grad_y, x, weight):
    """Launch the backward's a reduction over middle dims (programs own strips of the inner dims); returns grad_x,
    total_2.

    Assumes: grad_y (2-d torch.float32), x (2-d torch.float32), weight (1-d torch.float32) on one device;
    non-contiguous operands are copied contiguous here; outputs are new contiguous tensors.
    """
    grad_y = grad_y.contiguous()
    x = x.contiguous()
    weight = weight.contiguous()
    shape = grad_y.shape
    OUTER = math.prod(shape[:0])
    R = math.prod(shape[0:1])
    INNER = math.prod(shape[1:])
    st = weight.expand(shape).stride()
    weight_so = group_step(st, shape, 0, -1)
    weight_sr = group_step(st, shape, 0, 0)
    weight_si = group_step(st, shape, 1, 1)
    grad_x = torch.empty(shape, device=grad_y.device, dtype=torch.float32)
    total_2 = torch.empty(tuple(shape[:0]) + (1,) + tuple(shape[1:]), device=grad_y.device, dtype=torch.float32)
    block_i = min(128, next_power_of_2(INNER))
    grid = (OUTER * cdiv(INNER, block_i),)
    _rt20_affine_dropout_train_bwd_col1_kernel[grid](
        grad_y,
        x,
        weight,
        grad_x,
        total_2,
        R,
        INNER,
        weight_so,
        weight_sr,
        weight_si,
        BLOCK_R=32,
        BLOCK_I=block_i,
        num_warps=4,
    )
    return grad_x, total_2


class Rt20AffineDropoutTrainFunction(torch.autograd.Function):
    """Mul + add with a Triton backward. forward saves x, weight, bias only (the backward recomputes every forward value
    it reads); backward returns the gradients of x, weight, bias. A backward under create_graph=True (double
    backward) raises.
    """

    @staticmethod
    def forward(ctx, module, x, weight, bias):
        y = module.launch_forward(x, weight, bias)
        ctx.module = module  # its constructor's values (sizes, eps) size the backward's launches
        ctx.save_for_backward(x, weight, bias)
        return y

    @staticmethod
    def backward(ctx, grad_y):
        if torch.is_grad_enabled():  # create_graph=True: a graph of this backward is asked for
            raise RuntimeError(
                "double backward is not supported: Kernel Foundry generated and verified the first backward only"
            )
        x, weight, bias = ctx.saved_tensors
        return (None, *ctx.module.launch_backward(x, weight, bias, grad_y))


class ModelNew(nn.Module):
    """Mul + add in Triton: the constructor, parameters and buffers of Model; forward and backward."""

    def __init__(self, features, p=0.25):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(features))
        self.bias = nn.Parameter(torch.randn(features))
        self.p = p

    def forward(self, x):
        weight = self.weight
        bias = self.bias
        if torch.is_grad_enabled() and (x.requires_grad or weight.requires_grad or bias.requires_grad):
            return Rt20AffineDropoutTrainFunction.apply(self, x, weight, bias)
        return self.launch_forward(x, weight, bias)

    def launch_forward(self, x, weight, bias):
        """The forward's launchers in order (host views between them run in PyTorch)."""
        y = rt20_affine_dropout_train_forward(x, weight, bias)
        return y

    def launch_backward(self, x, weight, bias, grad_y):
        """The backward's launchers in order; returns the gradients of the arguments after the module (None where there
        is none).
        """
        total = rt20_affine_dropout_train_bwd_col0(grad_y)
        grad_bias = total.reshape(total.shape[1])
        grad_x, total_2 = rt20_affine_dropout_train_bwd_col1(grad_y, x, weight)
        grad_weight = total_2.reshape(total_2.shape[1])
        return grad_x, grad_weight, grad_bias

