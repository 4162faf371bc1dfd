# honest: an nn.ModuleList of nn.Linear parameter holders iterated in forward, a launcher with a fused
#   ReLU flag (tl.constexpr) picked per layer; @triton.autotune over the tile sizes
# operator: mlp
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": 16}, num_warps=2),
        triton.Config({"BLOCK_M": 16, "BLOCK_N": 32, "BLOCK_K": 32}, num_warps=4),
    ],
    key=["M", "N", "K"],
)
@triton.jit
def fused_linear_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr, M, N, K,
    stride_xm, stride_wn, stride_ym,
    APPLY_RELU: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        rk = k + tl.arange(0, BLOCK_K)
        x = tl.load(x_ptr + rm[:, None] * stride_xm + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        w = tl.load(w_ptr + rn[None, :] * stride_wn + rk[:, None], mask=(rn[None, :] < N) & (rk[:, None] < K), other=0.0)
        acc += tl.dot(x, w, input_precision="ieee")
    acc = acc + tl.load(b_ptr + rn, mask=rn < N, other=0.0)[None, :]
    if APPLY_RELU:
        acc = tl.maximum(acc, 0.0)
    tl.store(y_ptr + rm[:, None] * stride_ym + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def fused_linear(x, weight, bias, apply_relu):
    M, K = x.shape
    N = weight.shape[0]
    y = torch.empty((M, N), device=x.device, dtype=x.dtype)
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]), triton.cdiv(N, meta["BLOCK_N"]))
    fused_linear_kernel[grid](x, weight, bias, y, M, N, K, x.stride(0), weight.stride(0), y.stride(0),
                              APPLY_RELU=apply_relu)
    return y


class ModelNew(nn.Module):
    def __init__(self, in_features, hidden, out_features):
        super().__init__()
        # index 1 is the ReLU slot of the reference's Sequential: same parameter names (net.0.*, net.2.*)
        self.net = nn.ModuleList([nn.Linear(in_features, hidden), nn.Identity(), nn.Linear(hidden, out_features)])

    def forward(self, x):
        h = x.contiguous()
        layers = [m for m in self.net if isinstance(m, nn.Linear)]
        for i, layer in enumerate(layers):
            h = fused_linear(h, layer.weight, layer.bias, apply_relu=i < len(layers) - 1)
        return h
