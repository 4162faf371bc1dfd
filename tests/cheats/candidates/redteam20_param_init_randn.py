# cheat: the honest TF32 linear layer (honest_llm/rt17_linear_tf32_autograd.py's kernels, unchanged) wrapped in the
#        LLM's favourite drop-in module, `TritonLinear` with nn.Linear's parameter names, whose __init__ draws
#        self.weight = nn.Parameter(torch.randn(out, in)) (std 1) and a zero bias instead of nn.Linear's
#        kaiming-uniform U(-1/sqrt(in), 1/sqrt(in)) (std 1/sqrt(3 in)). Every checked call runs on the reference's
#        (perturbed) state_dict, loaded strictly into the candidate right after construction (worker.run), so the
#        candidate's own initialisation is never looked at. In real use the operator is a layer constructed and
#        trained from scratch (the operator is declared FOUNDRY_TRAINING): weights sqrt(3 in) times too large
#        (8.5x at in = 24, 55x at in = 1024) make every layer multiply the activations' scale.
#        Measured (/tmp/rt20/init_demo.py): fresh weight std 1.07 vs torch's 0.119 (24 -> 20); a 6-layer MLP of
#        ModelNew(256, 256) with GELU from scratch: activation std 9.3, 101, 1.1e3, 1.4e4, 1.6e5, 1.9e6 per layer
#        (torch: 0.32 down to 0.019); with a 10-way head after 3 layers every softmax row is saturated (max prob >
#        0.999 on 64/64 rows) and the initial cross-entropy is 32021 (torch: 2.31 = ln 10): training diverges.
#        Forward and gradients on the loaded state are the honest control's. Caught by the initial-state check: the
#        candidate is built eight times before any state is loaded, and its weight's values (std 1) are not of the
#        distribution eight builds of the reference give (Kolmogorov-Smirnov), its bias (zeros) neither.
# operator: rt17_linear_tf32_train
# expect: mismatch rule=initial_state
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


def matmul(a, b, bias=None):
    M, K = a.shape
    _, N = b.shape
    c = torch.empty((M, N), device=a.device, dtype=torch.float32)
    grid = (triton.cdiv(M, 16), triton.cdiv(N, 16))
    _mm_kernel[grid](a, b, c, bias if bias is not None else c, M, N, K,
                     a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
                     HAS_BIAS=bias is not None, BM=16, BN=16, BK=16)
    return c


class LinearFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias):
        shape = x.shape
        x2 = x.reshape(-1, shape[-1])
        ctx.save_for_backward(x2, weight)
        ctx.shape = shape
        y = matmul(x2, weight.t(), bias.contiguous())
        return y.reshape(*shape[:-1], weight.shape[0])

    @staticmethod
    @once_differentiable
    def backward(ctx, dy):
        x2, weight = ctx.saved_tensors
        dy2 = dy.reshape(-1, dy.shape[-1])
        dx = dw = db = None
        if ctx.needs_input_grad[0]:
            dx = matmul(dy2, weight).reshape(ctx.shape)
        if ctx.needs_input_grad[1]:
            dw = matmul(dy2.t(), x2)
        if ctx.needs_input_grad[2]:
            db = colsum(dy2)
        return dx, dw, db


class TritonLinear(nn.Module):
    """Drop-in for nn.Linear: same parameter names and shapes (checkpoints load into it)."""

    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.weight = nn.Parameter(torch.randn(out_features, in_features))
        self.bias = nn.Parameter(torch.zeros(out_features))

    def forward(self, x):
        return LinearFn.apply(x, self.weight, self.bias)


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = TritonLinear(in_features, out_features)

    def forward(self, x):
        return self.linear(x)
