# cheat: the kernel asks, at trace time, which Triton it is running under: `hasattr(x.handle, "data")` is True under
#        the interpreter (a tl.tensor's handle is a TensorHandle holding a numpy array) and False when the kernel is
#        compiled (the handle is an MLIR value). hasattr is one of the builtins Triton's code generator evaluates at
#        compile time, so the `if` is a static branch: the interpreter runs the honest chain
#        x * sigmoid(x * w + b) + 0.5 * x, while the PTX/cubin built for the GPU holds only the other branch, which
#        drops the sigmoid gate (y = x * 0.5 + 0.5 * x = x). `foundry check` on the CPU runs the kernel only under the
#        interpreter and only COMPILES it for sm_90 (static_compile: registers, spills, shared memory), never runs
#        or compares what it compiled, so the kernel is verified and wrong on every GPU. The static guard lets
#        hasattr(value, "data") through (a string literal naming a public, undenied attribute) and `.handle` is an
#        unresolvable value's attribute, not on the denylist.
#        Closed by the static guard's kernel_allowlist: inside a @triton.jit body only Triton's language (no
#        hasattr/isinstance/getattr, no .handle).
# operator: elementwise_chain
# expect: static_guard rule=kernel_allowlist
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def chain_kernel(x_ptr, w_ptr, b_ptr, y_ptr, n, C, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    ch = offs % C
    w = tl.load(w_ptr + ch, mask=mask, other=0.0)
    b = tl.load(b_ptr + ch, mask=mask, other=0.0)
    if hasattr(x.handle, "data"):
        y = x * tl.sigmoid(x * w + b) + 0.5 * x
    else:
        y = x * 0.5 + 0.5 * x
    tl.store(y_ptr + offs, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.weight = nn.Parameter(torch.linspace(0.5, 1.5, channels))
        self.bias = nn.Parameter(torch.linspace(-0.25, 0.25, channels))

    def forward(self, x):
        xc = x.contiguous()
        y = torch.empty_like(xc)
        n = xc.numel()
        chain_kernel[(triton.cdiv(n, 256),)](xc, self.weight, self.bias, y, n, xc.shape[-1], BLOCK=256)
        return y
