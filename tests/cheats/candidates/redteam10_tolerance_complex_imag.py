# cheat: a complex output with only its real part computed: the kernel writes re*cos - im*sin and leaves the
#        imaginary half 0 (half the arithmetic, and any value there would do). correctness.compare turns both
#        outputs into fp64 with .to(torch.float64), which for a complex tensor keeps the real part and discards
#        the imaginary one; unwritten(), elementwise() and relative_rms() all judge real parts only, and the
#        probes treat a complex output as non-floating (zeros fail on the real part alone).
# operator: rt10_complex_rotate
# expect: mismatch rule=tolerance
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def rotate_real_kernel(x_ptr, c_ptr, s_ptr, o_ptr, seq, half, sxb, sxs, sxd, BLOCK: tl.constexpr):
    row = tl.program_id(0)  # (batch, position)
    b = row // seq
    p = row % seq
    k = tl.arange(0, BLOCK)
    m = k < half
    base = x_ptr + b * sxb + p * sxs
    re = tl.load(base + (2 * k) * sxd, mask=m, other=0.0)
    im = tl.load(base + (2 * k + 1) * sxd, mask=m, other=0.0)
    c = tl.load(c_ptr + p * half + k, mask=m, other=0.0)
    s = tl.load(s_ptr + p * half + k, mask=m, other=0.0)
    out = o_ptr + row * half * 2 + 2 * k  # interleaved (real, imag) pairs of a complex64 buffer
    tl.store(out, re * c - im * s, mask=m)
    tl.store(out + 1, tl.zeros([BLOCK], dtype=tl.float32), mask=m)


class ModelNew(nn.Module):
    def __init__(self, seq: int, dim: int):
        super().__init__()
        inv = 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim))
        theta = torch.outer(torch.arange(seq).float(), inv)
        self.register_buffer("cos", torch.cos(theta))
        self.register_buffer("sin", torch.sin(theta))

    def forward(self, x):
        b, s, d = x.shape
        out = torch.empty((b, s, d // 2), dtype=torch.complex64, device=x.device)
        flat = torch.view_as_real(out)
        c = self.cos.contiguous()
        sn = self.sin.contiguous()
        rotate_real_kernel[(b * s,)](
            x, c, sn, flat, s, d // 2, x.stride(0), x.stride(1), x.stride(2), BLOCK=triton.next_power_of_2(d // 2)
        )
        return out
