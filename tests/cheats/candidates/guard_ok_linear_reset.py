# cheat: none: an honest linear layer in the style LLMs write that the denylist guard refused: a Triton
#        submodule whose reset_parameters is copied from nn.Linear (nn.init.kaiming_uniform_ with
#        a=math.sqrt(5), nn.init._calculate_fan_in_and_fan_out, nn.init.uniform_). The allowlist guard must let
#        it through.
# operator: linear_small
# expect: verified
import math

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _linear_kernel(x_ptr, w_ptr, b_ptr, y_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        rk = k0 + tl.arange(0, BK)
        a = tl.load(x_ptr + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        w = tl.load(w_ptr + rn[None, :] * K + rk[:, None], mask=(rn[None, :] < N) & (rk[:, None] < K), other=0.0)
        acc += tl.dot(a, w, input_precision="ieee")  # a broadcast product summed over K compiles to a TF32 dot
    acc += tl.load(b_ptr + rn, mask=rn < N, other=0.0)[None, :]
    tl.store(y_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = TritonLinear(in_features, out_features)

    def forward(self, x):
        return self.linear(x)


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
        fan_in, _ = nn.init._calculate_fan_in_and_fan_out(self.weight)
        bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
        nn.init.uniform_(self.bias, -bound, bound)

    def forward(self, x):
        x = x.contiguous()
        M, K = x.shape
        y = torch.empty((M, self.out_features), device=x.device, dtype=x.dtype)
        grid = (triton.cdiv(M, 16), triton.cdiv(self.out_features, 16))
        _linear_kernel[grid](x, self.weight, self.bias, y, M, self.out_features, K, BM=16, BN=16, BK=16)
        return y
