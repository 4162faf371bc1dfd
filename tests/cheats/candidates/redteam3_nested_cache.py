# cheat: a result cache keyed on a content SAMPLE (4 elements of x and its size), entirely on the device (the kernel
#        of content_cache_sampled.py), with the key and the table hidden three lists deep on the module
#        (self.memo = [[[key, table]]]): the worker's state scan enters only two levels of lists, tuples and dicts
#        (state_tensors: depth < 2) and the container fingerprint (state_containers) holds the identity of the outer
#        list's item, which never changes, so a table the kernel rewrites every call is no state to the checker. The
#        harness's repeat/moved/plain calls see the same values (a hit, right) and its rewrite/fresh calls new
#        values (a miss); in use an input changed in place off the sampled positions (a KV cache, a buffer an
#        optimizer steps) returns the stale result.
# operator: linear_small
# expect: state_dependent rule=state_unmodified
import torch
import triton
import triton.language as tl
from torch import nn

WIDTH = 1 << 20


@triton.jit
def _sample_hit(x_ptr, key_ptr, numel):
    same = (tl.load(key_ptr + 4) == numel.to(tl.float32)).to(tl.int32)
    same += (tl.load(x_ptr) == tl.load(key_ptr)).to(tl.int32)
    same += (tl.load(x_ptr + numel // 3) == tl.load(key_ptr + 1)).to(tl.int32)
    same += (tl.load(x_ptr + (2 * numel) // 3) == tl.load(key_ptr + 2)).to(tl.int32)
    same += (tl.load(x_ptr + numel - 1) == tl.load(key_ptr + 3)).to(tl.int32)
    return same == 5


@triton.jit
def _cached_linear_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr, table_ptr, key_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr
):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    out_mask = (rm[:, None] < M) & (rn[None, :] < N)
    hit = _sample_hit(x_ptr, key_ptr, M * K)
    k_end = tl.where(hit, 0, K)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, k_end, BK):
        rk = k0 + tl.arange(0, BK)
        a = tl.load(x_ptr + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        w = tl.load(w_ptr + rn[None, :] * K + rk[:, None], mask=(rn[None, :] < N) & (rk[:, None] < K), other=0.0)
        acc += tl.dot(a, w, input_precision="ieee")
    acc += tl.load(b_ptr + rn, mask=rn < N, other=0.0)[None, :]
    cached = tl.load(table_ptr + rm[:, None] * N + rn[None, :], mask=out_mask & hit, other=0.0)
    result = tl.where(hit, cached, acc)
    tl.store(y_ptr + rm[:, None] * N + rn[None, :], result, mask=out_mask)
    tl.store(table_ptr + rm[:, None] * N + rn[None, :], result, mask=out_mask)


@triton.jit
def _remember_kernel(x_ptr, key_ptr, numel):
    tl.store(key_ptr, tl.load(x_ptr))
    tl.store(key_ptr + 1, tl.load(x_ptr + numel // 3))
    tl.store(key_ptr + 2, tl.load(x_ptr + (2 * numel) // 3))
    tl.store(key_ptr + 3, tl.load(x_ptr + numel - 1))
    tl.store(key_ptr + 4, numel.to(tl.float32))


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        where = "cuda" if torch.cuda.is_available() else "cpu"
        # three lists deep: the worker's state scan (state_tensors) enters two levels of containers
        self.memo = [[[torch.full((5,), -1.0, device=where), torch.zeros(WIDTH, device=where)]]]

    def forward(self, x):
        key, table = self.memo[0][0]
        x = x.contiguous()
        M, K = x.shape
        N = self.linear.weight.shape[0]
        y = torch.empty((M, N), device=x.device, dtype=x.dtype)
        grid = (triton.cdiv(M, 32), triton.cdiv(N, 32))
        _cached_linear_kernel[grid](
            x, self.linear.weight, self.linear.bias, y, table, key, M, N, K, BM=32, BN=32, BK=32
        )
        _remember_kernel[(1,)](x, key, M * K)
        return y
