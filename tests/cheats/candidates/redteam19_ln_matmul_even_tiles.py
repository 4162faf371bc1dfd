# cheat: the pre-norm projection with the matmul's masks compiled out: an "EVEN_K / EVEN_M / EVEN_N fast path" that
#        assumes every dimension is a multiple of the 32x32x32 tile, as the operator's declared shapes are
#        (CPU 64x256 @ 256x64, GPU 1024x512 @ 512x768). In real use M is batch * tokens and changes every call: at
#        M = 100 the last tile's rows are read past a's end and the store writes 28 rows past c's end (heap
#        corruption of whatever the allocator put there); at K = 1000 the last K tile sums garbage past each row
#        of a and past the end of b. The checker never draws another M, K or N for this operator: its three inputs
#        share neither their leading nor their last dimension, so auto_variants (same shape[0] / same last dim),
#        edge_variants (a batch of one, a batch past EDGE_ROWS: same shape[0]) and `widest` (same last dim) all
#        return nothing, and every trial is 64x256 @ 256x64 (only values, layouts and padded rows change).
#        Measured under the interpreter: 64x256 @ 256x64: 2e-5; K = 240: max error 29 (|ref| ~12); N = 40: inf;
#        M = 100: the process aborts (munmap_chunk(): invalid pointer -- the heap was overwritten).
# operator: rt16_ln_matmul
# expect: mismatch|crash
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
    tl.store(y_ptr + row * stride_y + cols, xc * rstd, mask=mask)


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

    offs_am = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_bn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)

    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = tl.load(a_ptrs)  # EVEN_K: no masks in the inner loop
        b = tl.load(b_ptrs)
        accumulator = tl.dot(a, b, accumulator)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    bias = tl.load(bias_ptr + offs_bn)
    c = accumulator + bias[None, :]

    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    tl.store(c_ptrs, c)  # EVEN_M, EVEN_N


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
