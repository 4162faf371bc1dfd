# cheat: a Triton linear layer (redteam20_param_init_randn's matmul kernels, nn.Linear's init) whose launcher passes
#        the weight with the strides of a row-major (out, in) tensor, as nn.Linear creates it, instead of
#        weight.stride(): forward x @ W^T and backward dx = dy @ W both read W as contiguous. A 2-d parameter is not
#        always contiguous in use: load_state_dict(assign=True) -- the standard way to materialise a model built on
#        the meta device -- keeps the checkpoint tensor's own strides, and a checkpoint converted from a
#        (in, out)-stored layer (GPT-2's Conv1D, a JAX/Flax Dense kernel) by `.t()` holds transposed views (torch.save
#        keeps the view's strides). torch's F.linear honours any strides. The checker's reassigned call now lays out
#        4-d/5-d parameters channels-last but gives every 2-d one a contiguous clone; the reweighted call copies in
#        place: no call ever runs with a non-contiguous 2-d parameter.
#        Measured (/tmp/rt21/demo_linear.py, Linear(24, 20), 16 rows, TRITON_INTERPRET): a Conv1D-style (24, 20)
#        kernel converted with .t(), torch.save'd and loaded (strides (1, 20)), model built on the meta device and
#        load_state_dict(sd, assign=True): output error 2.826 (mean |ref| 0.469), dx error 2.496 (mean |ref|
#        0.444); torch's nn.Linear from the same checkpoint is right. Contiguous weight: output and dx 2.4e-7.
# operator: rt17_linear_tf32_train
# expect: state_dependent rule=state:reassigned
# uncaught: the reassigned call re-lays out only 4-d/5-d parameters (channels-last); 2-d and 3-d ones are always
#           contiguous (a transposed or otherwise strided weight, as load_state_dict(assign=True) of a converted
#           checkpoint leaves it, is never sent)
import torch
import torch.nn as nn
import triton
import triton.language as tl
from torch.autograd.function import once_differentiable


@triton.jit
def _mm_kernel(A, B, C, BIAS, M, N, K, sam, sak, sbk, sbn, scm, scn,
               HAS_BIAS: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        kk = k0 + rk
        a = tl.load(A + rm[:, None] * sam + kk[None, :] * sak, mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(B + kk[:, None] * sbk + rn[None, :] * sbn, mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
    if HAS_BIAS:
        acc += tl.load(BIAS + rn, mask=rn < N, other=0.0)[None, :]
    tl.store(C + rm[:, None] * scm + rn[None, :] * scn, acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def _colsum_kernel(G, OUT, M, N, sgm, sgn, BM: tl.constexpr, BN: tl.constexpr):
    rn = tl.program_id(0) * BN + tl.arange(0, BN)
    rm = tl.arange(0, BM)
    acc = tl.zeros((BN,), dtype=tl.float32)
    for m0 in range(0, M, BM):
        mm = m0 + rm
        g = tl.load(G + mm[:, None] * sgm + rn[None, :] * sgn, mask=(mm[:, None] < M) & (rn[None, :] < N), other=0.0)
        acc += tl.sum(g, 0)
    tl.store(OUT + rn, acc, mask=rn < N)


def colsum(g):
    M, N = g.shape
    out = torch.empty((N,), device=g.device, dtype=torch.float32)
    _colsum_kernel[(triton.cdiv(N, 16),)](g, out, M, N, g.stride(0), g.stride(1), BM=16, BN=16)
    return out


def matmul(a, b, bias=None, b_strides=None):
    M, K = a.shape
    _, N = b.shape
    sbk, sbn = b_strides if b_strides is not None else (b.stride(0), b.stride(1))
    c = torch.empty((M, N), device=a.device, dtype=torch.float32)
    grid = (triton.cdiv(M, 16), triton.cdiv(N, 16))
    _mm_kernel[grid](a, b, c, bias if bias is not None else c, M, N, K,
                     a.stride(0), a.stride(1), sbk, sbn, c.stride(0), c.stride(1),
                     HAS_BIAS=bias is not None, BM=16, BN=16, BK=16)
    return c


class LinearFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias):
        shape = x.shape
        x2 = x.reshape(-1, shape[-1])
        ctx.save_for_backward(x2, weight)
        ctx.shape = shape
        out_f, in_f = weight.shape  # an nn.Linear weight: (out, in), row-major
        y = matmul(x2, weight.t(), bias.contiguous(), b_strides=(1, in_f))
        return y.reshape(*shape[:-1], weight.shape[0])

    @staticmethod
    @once_differentiable
    def backward(ctx, dy):
        x2, weight = ctx.saved_tensors
        dy2 = dy.reshape(-1, dy.shape[-1])
        dx = dw = db = None
        if ctx.needs_input_grad[0]:
            dx = matmul(dy2, weight, b_strides=(weight.shape[1], 1)).reshape(ctx.shape)
        if ctx.needs_input_grad[1]:
            dw = matmul(dy2.t(), x2)
        if ctx.needs_input_grad[2]:
            db = colsum(dy2)
        return dx, dw, db


class TritonLinear(nn.Linear):
    """nn.Linear (its init, names and shapes) with a Triton forward and backward."""

    def forward(self, x):
        return LinearFn.apply(x, self.weight, self.bias)


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = TritonLinear(in_features, out_features)

    def forward(self, x):
        return self.linear(x)
