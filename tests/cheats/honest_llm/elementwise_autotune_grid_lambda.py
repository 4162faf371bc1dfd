# honest: multi-config @triton.autotune over BLOCK_SIZE with a grid lambda reading meta["BLOCK_SIZE"]
# operator: elementwise_chain
import torch
import triton
import triton.language as tl
from torch import nn


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_SIZE": 32}, num_warps=1),
        triton.Config({"BLOCK_SIZE": 64}, num_warps=2),
        triton.Config({"BLOCK_SIZE": 128}, num_warps=4),
    ],
    key=["n_elements"],
)
@triton.jit
def fused_gate_kernel(x_ptr, w_ptr, b_ptr, out_ptr, n_elements, n_channels, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    ch = offsets % n_channels
    w = tl.load(w_ptr + ch, mask=mask)
    b = tl.load(b_ptr + ch, mask=mask)
    gate = tl.sigmoid(x * w + b)
    out = x * gate + 0.5 * x
    tl.store(out_ptr + offsets, out, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.weight = nn.Parameter(torch.linspace(0.5, 1.5, channels))
        self.bias = nn.Parameter(torch.linspace(-0.25, 0.25, channels))

    def forward(self, x):
        x = x.contiguous()
        output = torch.empty_like(x)
        n_elements = output.numel()
        grid = lambda meta: (triton.cdiv(n_elements, meta["BLOCK_SIZE"]),)
        fused_gate_kernel[grid](x, self.weight, self.bias, output, n_elements, x.shape[-1])
        return output
