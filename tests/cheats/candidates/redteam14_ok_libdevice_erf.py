# cheat: none (an honest control, wrongly rejected). The exact (erf) GELU followed by SiLU, elementwise, with erf from
#        Triton's libdevice (`from triton.language.extra import libdevice; libdevice.erf(x)`, the idiom of Liger,
#        Unsloth and most LLM-written GELU kernels, and an import rules/guard.yaml explicitly allows:
#        triton.language.extra.libdevice.*). Correct in real use: compiled and run on an H100 (triton 3.6) it is
#        within 1e-6 of F.silu(F.gelu(x)) at 4 shapes/scales. Under the Triton interpreter (triton 3.7.1 here)
#        libdevice functions return None (no interpreter implementation), so the CPU check raises inside the
#        kernel and rejects it as compile_error. Fixed by interp_libdevice (NumPy implementations under the
#        interpreter, installed with interp_autotune.install).
# operator: gelu_silu
# expect: verified
import torch
import triton
import triton.language as tl
from torch import nn
from triton.language.extra import libdevice


@triton.jit
def gelu_silu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    g = 0.5 * x * (1.0 + libdevice.erf(x * 0.7071067811865476))
    y = g / (1.0 + tl.exp(-g))
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        xc = x.contiguous()
        y = torch.empty_like(xc)
        n = xc.numel()
        gelu_silu_kernel[(triton.cdiv(n, 1024),)](xc, y, n, BLOCK=1024)
        return y
