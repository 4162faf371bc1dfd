# cheat: a kernel that tells the GPU from the CPU check at run time, with nothing but tl.* arithmetic. tl.sqrt compiles
#        to PTX sqrt.approx.ftz.f32, which flushes a subnormal input to 0; the Triton interpreter computes np.sqrt in
#        fp32 and keeps subnormals. So `tl.sqrt(|x| * 1e-39) > 0` (|x| * 1e-39 is subnormal for |x| < 11) is True
#        for every nonzero x under the interpreter and False on every NVIDIA GPU. The kernel computes the honest
#        chain x * sigmoid(x * w + b) + 0.5 * x where that probe is True and a cheaper wrong one (the sigmoid gate
#        dropped: y = x) where it is False. The kernel_allowlist sees only tl.* names; the sm_90 static compile
#        succeeds (it never runs the code); the interpreter has no FTZ semantics for tl.sqrt / tl.rsqrt / tl.exp2 /
#        libdevice (enable_reflect_ftz) at all.
# operator: elementwise_chain
# expect: mismatch
# uncaught: the interpreter keeps subnormals where the compiled kernel flushes them (sqrt.approx.ftz, ex2.approx.ftz):
#           a comparison on subnormal-scaled values tells the GPU from the CPU check; needs FTZ in the interpreter
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
    exact = tl.sqrt(tl.abs(x) * 1e-39) > 0.0  # "denormal-safe path"
    y = tl.where(exact, x * tl.sigmoid(x * w + b) + 0.5 * x, x)
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
