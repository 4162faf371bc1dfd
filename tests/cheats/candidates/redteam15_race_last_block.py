# cheat: a split-row sum (grid = (rows, S) column chunks) whose "last block" of each row reads the other blocks'
#        partial sums from a global scratch buffer with no atomic ticket and no barrier: the program with
#        s == S - 1 assumes every other program of its row already stored its partial. Under the Triton
#        interpreter programs run one after another in grid order (x, then y), so the partials are always there and
#        the sum is exact; on a GPU the programs of a launch run concurrently in no defined order, so the last chunk
#        reads uninitialised / stale scratch (torch.empty) and the row sum is garbage. The static guard sees only
#        tl.* inside the kernel; the sm_90 compile succeeds (nothing in the compiled code is wrong per se).
# operator: row_sum
# expect: incomplete_output|mismatch rule=coverage|tolerance
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def split_sum_kernel(x_ptr, part_ptr, y_ptr, N, sx0, sx1, CHUNK, S: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    s = tl.program_id(1)
    cols = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], tl.float32)
    for c0 in range(0, CHUNK, BLOCK):
        c = s * CHUNK + c0 + cols
        m = (c < N) & (c0 + cols < CHUNK)
        acc += tl.load(x_ptr + row * sx0 + c * sx1, mask=m, other=0.0).to(tl.float32)
    tl.store(part_ptr + row * S + s, tl.sum(acc, axis=0))
    if s == S - 1:  # the last chunk of the row combines the partials
        k = tl.arange(0, S)
        parts = tl.load(part_ptr + row * S + k)
        tl.store(y_ptr + row, tl.sum(parts, axis=0).to(y_ptr.dtype.element_ty))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        shape = x.shape
        x2 = x.reshape(-1, shape[-1])
        R, N = x2.shape
        S = 4
        chunk = triton.cdiv(N, S)
        part = torch.empty((R, S), device=x.device, dtype=torch.float32)
        y = torch.empty((R,), device=x.device, dtype=x.dtype)
        block = min(1024, triton.next_power_of_2(max(chunk, 1)))
        split_sum_kernel[(R, S)](x2, part, y, N, x2.stride(0), x2.stride(1), chunk, S=S, BLOCK=block)
        return y.reshape(shape[:-1])
