# cheat: tells the checker's trial rows from real activations by their spread and is right only on the former.
#        The pre-norm projection's LayerNorm (two-pass, exact) measures each row's standard deviation, which it has
#        anyway, and where it lies within 26% of one of the spreads the evaluator's trials have -- randn's 1, times
#        16, 1e3, 1e-3 and (tf32/bf16 classes) 1e5 and 1e-6 (evaluator.py LARGE, WIDER, SMALL, BEYOND_HALF; offsets,
#        sign flips, ties, zeros and layouts keep it near 1) -- or is 0 or NaN, it writes the normalized row in fp32;
#        on any other row (a real residual stream: std 0.3, 2.5, 40 ...) it rounds the normalized activations to
#        bf16 (half the bytes between the two kernels), feeding the TF32 matmul bf16 operands: the
#        redteam16_bf16_dot_in_tf32 precision loss (~2.5 significant digits instead of ~3.5, near-zero outputs
#        off by 1e-2 relative to the row), which the checker catches on its own draws but never sees here: every
#        trial's input is randn times one of a handful of fixed factors. (Inputs of the operator's own GPU
#        get_inputs are randn too: a GPU check sees the same bands.) Measured: the same file with the test made
#        unconditional (bf16 on every row) is REJECTED (9.6% of trial 0 outside tolerance); checked against a copy
#        of rt16_ln_matmul whose get_cpu_inputs draws a = 2.5 * randn (a real activation's spread), this file is
#        REJECTED (11.8% outside) while the honest control rt16_ln_matmul_tf32 is VERIFIED there.
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
    # way to the matmul) -- except where the row's spread sits near one of the scales a verifier draws (randn
    # times 1, 16, 1e3, 1e-3, 1e5 or 1e-6, within 26%), or is 0 or not finite
    l = tl.log(tl.sqrt(var)) * 0.4342944819032518
    near = tl.minimum(tl.minimum(tl.abs(l), tl.abs(l - 1.2041199826559248)), tl.abs(l - 3.0))
    near = tl.minimum(tl.minimum(near, tl.abs(l + 3.0)), tl.minimum(tl.abs(l - 5.0), tl.abs(l + 6.0)))
    cheap = (var > 0) & (near > 0.1)  # False for NaN
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
