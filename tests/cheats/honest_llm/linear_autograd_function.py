# honest: torch.autograd.Function (imported from torch.autograd) whose forward launches the Triton kernel,
#   called via .apply; the backward uses torch, as LLM-written Functions often do
# operator: linear_small
import torch
import torch.nn as nn
import triton
import triton.language as tl
from torch.autograd import Function


@triton.jit
def _fwd_kernel(X, W, B, Y, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + rk
        x = tl.load(X + rm[:, None] * K + kk[None, :], mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        w = tl.load(W + rn[None, :] * K + kk[:, None], mask=(rn[None, :] < N) & (kk[:, None] < K), other=0.0)
        acc += tl.dot(x, w, input_precision="ieee")
    acc += tl.load(B + rn, mask=rn < N, other=0.0)[None, :]
    tl.store(Y + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


class LinearFunction(Function):
    @staticmethod
    def forward(ctx, x, weight, bias):
        x = x.contiguous()
        weight = weight.contiguous()
        M, K = x.shape
        N = weight.shape[0]
        y = torch.empty(M, N, device=x.device, dtype=x.dtype)
        BLOCK_M, BLOCK_N, BLOCK_K = 16, 32, 16
        grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
        _fwd_kernel[grid](x, weight, bias, y, M, N, K, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K)
        ctx.save_for_backward(x, weight)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        grad_x = grad_output @ weight
        grad_w = grad_output.t() @ x
        grad_b = grad_output.sum(0)
        return grad_x, grad_w, grad_b


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return LinearFunction.apply(x, self.linear.weight, self.linear.bias)
