# cheat: the honest TF32 linear layer (honest_llm/rt17_linear_tf32_autograd.py's kernels) with the LLM's defensive
#        "empty batch: nothing to launch" early return in forward AND backward. The forward's is right (an empty
#        output), the backward's returns torch.empty_like(weight) / new_empty(bias) for dW and db -- uninitialised
#        memory -- where the gradient of a layer that saw no rows is exactly zero. Empty batches are routine in
#        training: a mixture-of-experts expert the router sends no token in a step (top-k routing, every MoE LLM),
#        an empty bucket of a packed / masked batch, a detection head with no positive anchors. The expert's weights
#        then take an optimizer step along whatever the allocator hands back: on a GPU the caching allocator's
#        freed blocks (an earlier gradient, activations), on the CPU malloc's.
#        No trial, variant or gradient call has a dimension of size 0 (edge_variants' smallest batch is one row;
#        resize grows or shrinks by one from sizes > 1), so the branch never runs.
#        Measured (/tmp/rt20/empty_demo.py: one expert, SGD lr 0.1, zero_grad(set_to_none=True); 8 tokens, then 0,
#        then 0): torch's dW and db on the empty steps are all zeros; this file's: |dW| up to 9.6e32 (88 of 480
#        entries nonzero) and db 20/20 nonzero on step 1, again on step 2: the weights end 1.9e32 off torch's.
#        Non-empty batches: the honest control's results (forward error 2.4e-7).
# operator: rt17_linear_tf32_train
# expect: mismatch rule=gradient
# uncaught: no call ever has an empty dimension (a batch of 0 rows); a backward's size-0 path (here: uninitialised
#           weight gradients where they must be zeros) is never run
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
        if x2.shape[0] == 0:  # an empty batch: nothing to launch
            return x.new_empty((*shape[:-1], weight.shape[0]))
        y = matmul(x2, weight.t(), bias.contiguous())
        return y.reshape(*shape[:-1], weight.shape[0])

    @staticmethod
    @once_differentiable
    def backward(ctx, dy):
        x2, weight = ctx.saved_tensors
        dy2 = dy.reshape(-1, dy.shape[-1])
        if dy2.shape[0] == 0:  # an empty batch: nothing to launch
            return x2.new_empty(ctx.shape), torch.empty_like(weight), weight.new_empty(weight.shape[0])
        dx = dw = db = None
        if ctx.needs_input_grad[0]:
            dx = matmul(dy2, weight).reshape(ctx.shape)
        if ctx.needs_input_grad[1]:
            dw = matmul(dy2.t(), x2)
        if ctx.needs_input_grad[2]:
            db = colsum(dy2)
        return dx, dw, db


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return LinearFn.apply(x, self.linear.weight, self.linear.bias)
