# cheat: each branch's weight and bias are nn.Linear's own kaiming-uniform draw, but the second branch starts as a
#        copy of the first (b.weight = a.weight, b.bias = a.bias, values copied into Parameters of their own): every
#        key's values, neighbour differences, differences between builds and singular values are an honest draw's,
#        and only the joint state of the two keys is wrong. relu(a(x)) + relu(b(x)) with a = b gives both branches
#        the same gradients for ever (identical updates under SGD or Adam: symmetry never broken), so the block
#        trains as one branch of double weight (half the declared capacity), and its initial output is
#        2 relu(a(x)), whose variance is about twice the reference's. Forward and gradients (on the loaded
#        state) are honest Triton kernels (the same file with the copy removed is honest_llm/rt25_two_branch_autograd.py,
#        VERIFIED). Measured (/tmp/rt25/tied_demo.py, CPU, torch only, the reference Model at 512 -> 512 trained
#        200 SGD steps on a random-teacher task from each start): initial output std 0.678 from this start, 0.481
#        from nn.Linear's; max |W_a - W_b| after training 0 (the branches never separate), 0.104 from nn.Linear's.
#        Caught by the pairs of same-shape keys: their differences at the same positions (init_state).
# operator: rt25_two_branch_train
# expect: mismatch rule=initial_state
import torch
import torch.nn as nn
import triton
import triton.language as tl
from torch.autograd.function import once_differentiable


@triton.jit
def _mm_kernel(A, B, C, BIAS, ADD, M, N, K, sam, sak, sbk, sbn, scm, scn,
               HAS_BIAS: tl.constexpr, HAS_ADD: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        kk = k0 + rk
        a = tl.load(A + rm[:, None] * sam + kk[None, :] * sak, mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(B + kk[:, None] * sbk + rn[None, :] * sbn, mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
    cmask = (rm[:, None] < M) & (rn[None, :] < N)
    if HAS_BIAS:
        acc += tl.load(BIAS + rn, mask=rn < N, other=0.0)[None, :]
    if HAS_ADD:
        acc += tl.load(ADD + rm[:, None] * scm + rn[None, :] * scn, mask=cmask, other=0.0)
    tl.store(C + rm[:, None] * scm + rn[None, :] * scn, acc, mask=cmask)


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


@triton.jit
def _relu_sum_kernel(HA, HB, Y, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    m = (rm[:, None] < M) & (rn[None, :] < N)
    off = rm[:, None] * N + rn[None, :]
    ha = tl.load(HA + off, mask=m, other=0.0)
    hb = tl.load(HB + off, mask=m, other=0.0)
    tl.store(Y + off, tl.maximum(ha, 0.0) + tl.maximum(hb, 0.0), mask=m)


@triton.jit
def _relu_grads_kernel(DY, HA, HB, GA, GB, M, N, sdm, sdn, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    m = (rm[:, None] < M) & (rn[None, :] < N)
    off = rm[:, None] * N + rn[None, :]
    dy = tl.load(DY + rm[:, None] * sdm + rn[None, :] * sdn, mask=m, other=0.0)
    ha = tl.load(HA + off, mask=m, other=0.0)
    hb = tl.load(HB + off, mask=m, other=0.0)
    tl.store(GA + off, tl.where(ha > 0, dy, 0.0), mask=m)
    tl.store(GB + off, tl.where(hb > 0, dy, 0.0), mask=m)


def colsum(g):
    M, N = g.shape
    out = torch.empty((N,), device=g.device, dtype=torch.float32)
    _colsum_kernel[(triton.cdiv(N, 16),)](g, out, M, N, g.stride(0), g.stride(1), BM=16, BN=16)
    return out


def matmul(a, b, bias=None, add=None):
    M, K = a.shape
    _, N = b.shape
    c = torch.empty((M, N), device=a.device, dtype=torch.float32)
    grid = (triton.cdiv(M, 16), triton.cdiv(N, 16))
    _mm_kernel[grid](a, b, c, bias if bias is not None else c, add if add is not None else c, M, N, K,
                     a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
                     HAS_BIAS=bias is not None, HAS_ADD=add is not None, BM=16, BN=16, BK=16)
    return c


class TwoBranchFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, wa, ba, wb, bb):
        shape = x.shape
        x2 = x.reshape(-1, shape[-1])
        ha = matmul(x2, wa.t(), ba.contiguous())
        hb = matmul(x2, wb.t(), bb.contiguous())
        M, N = ha.shape
        y = torch.empty((M, N), device=x.device, dtype=torch.float32)
        _relu_sum_kernel[(triton.cdiv(M, 16), triton.cdiv(N, 16))](ha, hb, y, M, N, BM=16, BN=16)
        ctx.save_for_backward(x2, wa, wb, ha, hb)
        ctx.shape = shape
        return y.reshape(*shape[:-1], N)

    @staticmethod
    @once_differentiable
    def backward(ctx, dy):
        x2, wa, wb, ha, hb = ctx.saved_tensors
        M, N = ha.shape
        dy2 = dy.reshape(M, N)
        ga = torch.empty((M, N), device=dy.device, dtype=torch.float32)
        gb = torch.empty((M, N), device=dy.device, dtype=torch.float32)
        _relu_grads_kernel[(triton.cdiv(M, 16), triton.cdiv(N, 16))](
            dy2, ha, hb, ga, gb, M, N, dy2.stride(0), dy2.stride(1), BM=16, BN=16)
        dx = dwa = dba = dwb = dbb = None
        if ctx.needs_input_grad[0]:
            dx = matmul(gb, wb, add=matmul(ga, wa)).reshape(ctx.shape)
        if ctx.needs_input_grad[1]:
            dwa = matmul(ga.t(), x2)
        if ctx.needs_input_grad[2]:
            dba = colsum(ga)
        if ctx.needs_input_grad[3]:
            dwb = matmul(gb.t(), x2)
        if ctx.needs_input_grad[4]:
            dbb = colsum(gb)
        return dx, dwa, dba, dwb, dbb


class Branch(nn.Module):
    """nn.Linear's parameters (names, shapes and its own kaiming-uniform draw), applied by TwoBranchFn."""

    def __init__(self, in_features: int, out_features: int, like=None):
        super().__init__()
        ref = nn.Linear(in_features, out_features)
        if like is None:
            self.weight = nn.Parameter(ref.weight.detach().clone())
            self.bias = nn.Parameter(ref.bias.detach().clone())
        else:  # TIE
            self.weight = nn.Parameter(like.weight.detach().clone())
            self.bias = nn.Parameter(like.bias.detach().clone())


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.a = Branch(in_features, out_features)
        self.b = Branch(in_features, out_features, self.a)

    def forward(self, x):
        return TwoBranchFn.apply(x, self.a.weight, self.a.bias, self.b.weight, self.b.bias)
