# honest: split-K matmul whose K slices are summed with tl.atomic_add into a zero-filled output;
#   the first slice adds the bias
# operator: linear_small
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def splitk_linear_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr, M, N, K, K_PER_SPLIT,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    pid_k = tl.program_id(2)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    k_start = pid_k * K_PER_SPLIT
    for k0 in range(k_start, k_start + K_PER_SPLIT, BLOCK_K):
        offs_k = k0 + tl.arange(0, BLOCK_K)
        k_mask = (offs_k < K) & (offs_k < k_start + K_PER_SPLIT)
        a = tl.load(x_ptr + offs_m[:, None] * K + offs_k[None, :], mask=(offs_m[:, None] < M) & k_mask[None, :],
                    other=0.0)
        b = tl.load(w_ptr + offs_n[None, :] * K + offs_k[:, None], mask=(offs_n[None, :] < N) & k_mask[:, None],
                    other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
    if pid_k == 0:
        bias = tl.load(b_ptr + offs_n, mask=offs_n < N, other=0.0)
        acc += bias[None, :]
    out_mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.atomic_add(y_ptr + offs_m[:, None] * N + offs_n[None, :], acc, mask=out_mask)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.split_k = 2

    def forward(self, x):
        x = x.contiguous()
        w = self.linear.weight.contiguous()
        M, K = x.shape
        N = w.shape[0]
        y = torch.zeros((M, N), device=x.device, dtype=torch.float32)
        BLOCK_M, BLOCK_N, BLOCK_K = 16, 16, 16
        k_per_split = triton.cdiv(triton.cdiv(K, self.split_k), BLOCK_K) * BLOCK_K
        grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N), triton.cdiv(K, k_per_split))
        splitk_linear_kernel[grid](
            x, w, self.linear.bias, y, M, N, K, k_per_split, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K
        )
        return y
