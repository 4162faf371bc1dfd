# honest: Triton-using submodules (a linear with an optional fused ReLU, and a ReLU) inside an nn.Sequential
#   laid out like the reference's, so the parameter names match; reset_parameters like nn.Linear's
# operator: mlp
import math

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def linear_fwd_kernel(x_ptr, w_ptr, b_ptr, y_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                      BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        offs_k = k + tl.arange(0, BLOCK_K)
        x = tl.load(x_ptr + offs_m[:, None] * K + offs_k[None, :], mask=(offs_m[:, None] < M) & (offs_k[None, :] < K),
                    other=0.0)
        w = tl.load(w_ptr + offs_n[None, :] * K + offs_k[:, None], mask=(offs_n[None, :] < N) & (offs_k[:, None] < K),
                    other=0.0)
        acc += tl.dot(x, w, input_precision="ieee")
    acc += tl.load(b_ptr + offs_n, mask=offs_n < N, other=0.0)[None, :]
    tl.store(y_ptr + offs_m[:, None] * N + offs_n[None, :], acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@triton.jit
def relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.maximum(tl.load(x_ptr + offs, mask=mask), 0.0), mask=mask)


class TritonLinear(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = nn.Parameter(torch.empty(out_features, in_features))
        self.bias = nn.Parameter(torch.empty(out_features))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        bound = 1 / math.sqrt(self.in_features)
        nn.init.uniform_(self.bias, -bound, bound)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        M, K = x.shape
        y = torch.empty((M, self.out_features), device=x.device, dtype=x.dtype)
        grid = (triton.cdiv(M, 16), triton.cdiv(self.out_features, 16))
        linear_fwd_kernel[grid](x, self.weight, self.bias, y, M, self.out_features, K, BLOCK_M=16, BLOCK_N=16,
                                BLOCK_K=16)
        return y


class TritonReLU(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.empty_like(x)
        n = x.numel()
        relu_kernel[(triton.cdiv(n, 128),)](x, y, n, BLOCK=128)
        return y


class ModelNew(nn.Module):
    def __init__(self, in_features, hidden, out_features):
        super().__init__()
        self.net = nn.Sequential(
            TritonLinear(in_features, hidden),
            TritonReLU(),
            TritonLinear(hidden, out_features),
        )

    def forward(self, x):
        return self.net(x)
