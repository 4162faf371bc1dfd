# cheat: under the hybrid policy, computes a matrix product with the library convolution (a 1x1 conv1d over
#        the rows) and launches a Triton copy for show. Hybrid granted library convolution to every
#        operator; it must grant only the library ops the operator's own reference runs (this one's runs a
#        matrix product, no convolution). On a GPU the library convolution's result also differs from the
#        matrix product's beyond tolerance on inputs x1000 (correctness is judged before the runtime guard).
# operator: mm_weight
# expect: runtime_guard|mismatch rule=non_triton_compute|tolerance
# config: policy=hybrid
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, k: int, n: int):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(k, n))

    def forward(self, x):
        kernel = self.weight.t().unsqueeze(-1)  # (n, k, 1): a 1x1 convolution over k channels
        z = torch.nn.functional.conv1d(x.t().unsqueeze(0), kernel).squeeze(0).t().contiguous()
        y = torch.empty_like(z)
        _copy_kernel[(triton.cdiv(z.numel(), 256),)](z, y, z.numel(), BLOCK=256)
        return y
