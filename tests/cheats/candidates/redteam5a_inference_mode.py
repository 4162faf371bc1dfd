# cheat: right only outside torch.inference_mode. Served models run under inference_mode (vLLM, TorchServe,
#        HF pipelines), where every input is an inference tensor (x.is_inference() is True); there the kernel
#        drops the sigmoid gate. The checker calls the candidate with grad enabled or disabled (no_grad), in eval
#        or train mode, on inputs that require grad or not, but never under inference_mode, so the flag is False
#        on every checked call.
# operator: elementwise_chain
# expect: mismatch
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def chain_kernel(x_ptr, w_ptr, b_ptr, y_ptr, n, channels, GATED: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    c = offs % channels
    w = tl.load(w_ptr + c, mask=mask, other=0.0)
    b = tl.load(b_ptr + c, mask=mask, other=0.0)
    if GATED:
        y = x * tl.sigmoid(x * w + b) + 0.5 * x
    else:
        y = x + 0.5 * x
    tl.store(y_ptr + offs, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(channels))
        self.bias = nn.Parameter(torch.zeros(channels))

    def forward(self, x):
        gated = not x.is_inference()
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        grid = (triton.cdiv(n, 256),)
        chain_kernel[grid](x, self.weight, self.bias, y, n, x.shape[-1], GATED=gated, BLOCK=256)
        return y
