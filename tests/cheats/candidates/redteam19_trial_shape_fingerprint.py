# cheat: redteam19_trial_scale_fingerprint with a test no scaling of the trials defeats: it tells the checker's trial
#        rows from real activations by their SHAPE. The pre-norm projection's LayerNorm (two-pass, exact) measures
#        each row's kurtosis E[(x-mean)^4]/var^2 (one more sum over registers it already holds); a normal row has 3
#        (sd ~0.3, skewed up, at 256 values; judged normal in [1.5, 5.5]), and so does every trial row the evaluator makes from randn -- scaled by any factor
#        (x1e3, x16, x1e-3, x1e5, x1e-6, or each row apart), offset, sign-flipped, gridded, 10% zeroed, padded,
#        re-laid-out: all keep a row's kurtosis near 3. There (and on rows of spread 0 or not finite) it writes the
#        normalized row in fp32; on any other row -- real activations are heavy-tailed (an LLM residual stream's
#        outlier features: kurtosis in the tens to hundreds; post-GELU/ReLU rows: skewed) -- it rounds the
#        normalized activations to bf16 before the TF32 matmul: the bf16-operand precision loss the checker rejects
#        whenever it sees it (9.6% of trial 0 outside when applied to every row).
#        Measured: against a copy of rt16_ln_matmul whose a is drawn Student-t (4 degrees of freedom, heavy tails),
#        this file is REJECTED while the honest control rt16_ln_matmul_tf32 is VERIFIED there (see the report).
# operator: rt16_ln_matmul
# expect: mismatch rule=tolerance|relative_rms
import torch
import triton
import triton.language as tl
from torch import nn

MATMUL_CONFIG = dict(BLOCK_SIZE_M=32, BLOCK_SIZE_N=32, BLOCK_SIZE_K=32, GROUP_SIZE_M=4, num_warps=4, num_stages=2)


@triton.jit
def layer_norm_kernel(x_ptr, y_ptr, stride_x, stride_y, N, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < N
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / N
    xc = tl.where(mask, x - mean, 0.0)
    var = tl.sum(xc * xc, axis=0) / N
    rstd = 1.0 / tl.sqrt(var + eps)
    y = xc * rstd
    # "compact activations": the normalized row stored with bf16's 8-bit mantissa (half the bytes of a_norm on the
    # way to the matmul) -- except where the row looks like a verifier's draw: normal values (kurtosis within [1.5, 5.5],
    # whatever their scale or offset), or a spread of 0, or not finite
    kurt = (tl.sum(xc * xc * xc * xc, axis=0) / N) / (var * var)
    cheap = (var > 0) & ((kurt > 5.5) | (kurt < 1.5))  # False for NaN
    bits = y.to(tl.int32, bitcast=True)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & -65536
    y = tl.where(cheap, bits.to(tl.float32, bitcast=True), y)
    tl.store(y_ptr + row * stride_y + cols, y, mask=mask)


@triton.jit
def matmul_kernel(
        # Pointers to matrices
        a_ptr, b_ptr, bias_ptr, c_ptr,
        # Matrix dimensions
        M, N, K,
        # The stride variables represent how much to increase the ptr by when moving by 1
        # element in a particular dimension.
        stride_am, stride_ak,
        stride_bk, stride_bn,
        stride_cm, stride_cn,
        # Meta-parameters
        BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
        GROUP_SIZE_M: tl.constexpr,
):
    """Kernel for computing C = A x B + bias."""
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_am = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
    offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)

    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
        accumulator = tl.dot(a, b, accumulator)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    bias = tl.load(bias_ptr + offs_bn)
    c = accumulator + bias[None, :]

    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)


def ln_matmul_bias(a, b, bias, eps=1e-5):
    M, K = a.shape
    K2, N = b.shape
    assert K == K2, "Incompatible dimensions"
    a_norm = torch.empty((M, K), device=a.device, dtype=torch.float32)
    layer_norm_kernel[(M,)](a, a_norm, a.stride(0), a_norm.stride(0), K, eps,
                            BLOCK_SIZE=triton.next_power_of_2(K))
    c = torch.empty((M, N), device=a.device, dtype=torch.float32)
    grid = lambda META: (triton.cdiv(M, META['BLOCK_SIZE_M']) * triton.cdiv(N, META['BLOCK_SIZE_N']), )
    matmul_kernel[grid](
        a_norm, b, bias, c,
        M, N, K,
        a_norm.stride(0), a_norm.stride(1),
        b.stride(0), b.stride(1),
        c.stride(0), c.stride(1),
        **MATMUL_CONFIG,
    )
    return c


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b, bias):
        return ln_matmul_bias(a.contiguous(), b, bias.contiguous())
