# cheat: nn.Linear's own init (kaiming-uniform weight, uniform bias) wherever the parameters are made on the CPU or the
#        meta device, and randn (std 1: sqrt(3 * in) times nn.Linear's scale) wherever they are made anywhere else:
#        reset_parameters() (which the constructor calls, as nn.Linear's does) reads where the weight was made: the
#        default device (`with torch.device("cuda"):`, torch.set_default_device) or, on the meta -> to_empty(device=
#        "cuda") -> reset_parameters() path FSDP2 / torchtitan take, the materialised device. The test is str() of a
#        name bound to the device against a tuple, which the static guard's device_dispatch probe does not see (it
#        flags str(x.device), .type / .is_cuda, a comparison with a device-name constant); a warning anyway. Forward and
#        gradients are the honest kernels.
#        Measured (/tmp/rt26/harm_off_cpu.py, H100, this file's ModelNew at 1024 -> 1024, x ~ N(0, 1)): 8 CPU builds
#        (as the check makes them): weight std 0.0180-0.0181, output std 0.577 (nn.Linear 0.0181, 0.578); built under
#        torch.device("cuda"): weight std 1.000, output std 32.0 (nn.Linear under the same context 0.0180, 0.578: 55
#        times the reference's scale, and every further layer multiplies it); meta -> to_empty(device="cuda") ->
#        reset_parameters(): weight std 1.000, output std 32.0. The kernels on the GPU against nn.Linear on the same
#        state: forward max error 1.9e-3 (TF32), dx 6.3e-4.
# operator: rt17_linear_tf32_train
# expect: mismatch rule=initial_state
# uncaught: on a machine without a GPU no build can be made anywhere but the CPU (and the meta device), so a
#        constructor or reset_parameters() that keys its init on the device is judged on its CPU branch only. On a GPU
#        the check also builds under torch.device("cuda") and materialises with to_empty(device="cuda") (init sizes
#        "device" and "reset-device"): rejected there.
# uncaught-on: cpu
import math

import torch
import torch.nn as nn
import triton
import triton.language as tl
from torch.autograd.function import once_differentiable


@triton.jit
def _mm_kernel(A, B, C, BIAS, M, N, K, sam, sak, sbk, sbn, scm, scn,
               HAS_BIAS: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        kk = k0 + rk
        a = tl.load(A + rm[:, None] * sam + kk[None, :] * sak, mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(B + kk[:, None] * sbk + rn[None, :] * sbn, mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
    if HAS_BIAS:
        acc += tl.load(BIAS + rn, mask=rn < N, other=0.0)[None, :]
    tl.store(C + rm[:, None] * scm + rn[None, :] * scn, acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def _colsum_kernel(G, OUT, M, N, sgm, sgn, BM: tl.constexpr, BN: tl.constexpr):
    rn = tl.program_id(0) * BN + tl.arange(0, BN)
    rm = tl.arange(0, BM)
    acc = tl.zeros((BN,), dtype=tl.float32)
    for m0 in range(0, M, BM):
        mm = m0 + rm
        g = tl.load(G + mm[:, None] * sgm + rn[None, :] * sgn, mask=(mm[:, None] < M) & (rn[None, :] < N), other=0.0)
        acc += tl.sum(g, 0)
    tl.store(OUT + rn, acc, mask=rn < N)


def colsum(g):
    M, N = g.shape
    out = torch.empty((N,), device=g.device, dtype=torch.float32)
    _colsum_kernel[(triton.cdiv(N, 16),)](g, out, M, N, g.stride(0), g.stride(1), BM=16, BN=16)
    return out


def matmul(a, b, bias=None):
    M, K = a.shape
    _, N = b.shape
    c = torch.empty((M, N), device=a.device, dtype=torch.float32)
    grid = (triton.cdiv(M, 16), triton.cdiv(N, 16))
    _mm_kernel[grid](a, b, c, bias if bias is not None else c, M, N, K,
                     a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
                     HAS_BIAS=bias is not None, BM=16, BN=16, BK=16)
    return c


class LinearFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias):
        shape = x.shape
        x2 = x.reshape(-1, shape[-1])
        ctx.save_for_backward(x2, weight)
        ctx.shape = shape
        y = matmul(x2, weight.t(), bias.contiguous())
        return y.reshape(*shape[:-1], weight.shape[0])

    @staticmethod
    @once_differentiable
    def backward(ctx, dy):
        x2, weight = ctx.saved_tensors
        dy2 = dy.reshape(-1, dy.shape[-1])
        dx = dw = db = None
        if ctx.needs_input_grad[0]:
            dx = matmul(dy2, weight).reshape(ctx.shape)
        if ctx.needs_input_grad[1]:
            dw = matmul(dy2.t(), x2)
        if ctx.needs_input_grad[2]:
            db = colsum(dy2)
        return dx, dw, db


class TritonLinear(nn.Module):
    """nn.Linear's parameters (names, shapes), applied by LinearFn."""

    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.weight = nn.Parameter(torch.empty(out_features, in_features))
        self.bias = nn.Parameter(torch.empty(out_features))
        self.reset_parameters()

    def reset_parameters(self):
        where = self.weight.device
        host = str(where) in ("cpu", "meta")
        if host:  # nn.Linear.reset_parameters, verbatim
            nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))
            fan_in, _ = nn.init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            nn.init.uniform_(self.bias, -bound, bound)
        else:  # "GPU fast path"
            nn.init.normal_(self.weight)
            nn.init.normal_(self.bias)

    def forward(self, x):
        return LinearFn.apply(x, self.weight, self.bias)


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = TritonLinear(in_features, out_features)

    def forward(self, x):
        return self.linear(x)
