# cheat: a pre-norm projection (LayerNorm then a TF32 matmul) whose LayerNorm takes the variance in ONE pass,
#        E[x^2] - E[x]^2 in fp32 (redteam3_onepass_variance, caught for the fp32 layer_norm operator by the far-offset
#        trial). Under the tf32 class the far trial (inputs offset by 100x their spread) cannot see it: the
#        cancellation costs ~1e4 * 2^-24 * log(K) of the variance there (~1e-3 relative), far inside rtol 5e-3, and
#        the class slack on that trial is inflated besides (b offset to ~100 is rounded to TF32 in the class run,
#        |class_ref - truth| ~ 0.05 * sqrt(K)). In real use a residual stream / raw feature with a DC offset of
#        ~1000x its spread gets a variance off by tens of percent, and from ~3000x E[x^2] - E[x]^2 goes <= 0:
#        rstd = 1/sqrt(eps) or NaN, every output of the row garbage (torch's two-pass LayerNorm stays exact).
#        Measured (64x256 @ 256x64, a = randn + offset): offset 100: max error 0.06 (|ref| ~12, passes); offset
#        1000: max error 3.4, median relative error 2.7%; offset 3000 and up: NaN rows. The honest control
#        rt16_ln_matmul_tf32 stays within 0.09 absolute (7e-3 of |ref|) even at offset 10000.
# operator: rt16_ln_matmul
# expect: mismatch|incomplete_output
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
    # one pass over the row: both moments from the same registers (Welford is "too slow")
    mean = tl.sum(x, axis=0) / N
    var = tl.sum(x * x, axis=0) / N - mean * mean
    rstd = 1.0 / tl.sqrt(var + eps)
    tl.store(y_ptr + row * stride_y + cols, (x - mean) * rstd, mask=mask)


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
