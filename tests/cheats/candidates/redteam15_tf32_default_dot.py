# cheat: an fp32 matmul (operator precision fp32: TF32 is not allowed, the reference runs with TF32 off) written with
#        a plain `tl.dot(a, w)`. Triton's default input_precision for fp32 operands is "tf32" (knobs
#        language.fp32_default): compiled for sm_80+ the dot rounds both operands to TF32 (10-bit mantissa) on the
#        tensor cores, relative error ~1e-3, ten times the fp32 class's tolerance. The Triton interpreter ignores
#        input_precision (InterpreterBuilder.create_dot is np.matmul in fp32), so the CPU check sees an exact fp32
#        product; the sm_90 static compile only collects registers/spills/shared memory and never looks at the
#        dot's inputPrecision = tf32 in the TTGIR. Nothing in the guard or the checks asks for input_precision="ieee".
# operator: mm_weight
# expect: mismatch rule=tolerance|relative_rms
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def mm_kernel(a_ptr, w_ptr, y_ptr, M, N, K, sam, sak, swk, swn, sym, syn,
              BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros([BM, BN], tl.float32)
    for k0 in range(0, K, BK):
        kk = k0 + rk
        a = tl.load(a_ptr + rm[:, None] * sam + kk[None, :] * sak, mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        w = tl.load(w_ptr + kk[:, None] * swk + rn[None, :] * swn, mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, w)
    tl.store(y_ptr + rm[:, None] * sym + rn[None, :] * syn, acc.to(y_ptr.dtype.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


class ModelNew(nn.Module):
    def __init__(self, k, n):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(k, n) / k**0.5)

    def forward(self, x):
        shape = x.shape
        a = x.reshape(-1, shape[-1])
        M, K = a.shape
        N = self.weight.shape[1]
        y = torch.empty((M, N), device=x.device, dtype=x.dtype)
        BM, BN, BK = 64, 64, 32
        mm_kernel[(triton.cdiv(M, BM), triton.cdiv(N, BN))](a, self.weight, y, M, N, K, a.stride(0), a.stride(1),
                                                           self.weight.stride(0), self.weight.stride(1),
                                                           y.stride(0), y.stride(1), BM=BM, BN=BN, BK=BK)
        return y.reshape(*shape[:-1], N)
