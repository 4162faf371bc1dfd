# honest: Triton-backed activation submodules composed in an nn.Sequential, each launching its own kernel
# operator: gelu_silu
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def gelu_kernel(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    # exact GELU: 0.5 * x * (1 + erf(x / sqrt(2)))
    out = 0.5 * x * (1.0 + tl.math.erf(x / 1.4142135623730951))
    tl.store(out_ptr + offsets, out, mask=mask)


@triton.jit
def silu_kernel(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    out = x / (1.0 + tl.exp(-x))
    tl.store(out_ptr + offsets, out, mask=mask)


class TritonGELU(nn.Module):
    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        gelu_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)](x, out, n, BLOCK_SIZE=64)
        return out


class TritonSiLU(nn.Module):
    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        silu_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)](x, out, n, BLOCK_SIZE=64)
        return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.Sequential(TritonGELU(), TritonSiLU())

    def forward(self, x):
        return self.act(x)
