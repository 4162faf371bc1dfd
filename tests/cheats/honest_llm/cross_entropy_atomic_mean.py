# honest: one program per row, looping over class blocks with an online log-sum-exp, each row's loss / N
#   added with tl.atomic_add to a zero scalar (N: the targets not at -100, F.cross_entropy's ignore_index,
#   counted by a first kernel); the variable named `input`
# operator: cross_entropy
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def count_kernel(target_ptr, count_ptr, n_rows, BLOCK: tl.constexpr):
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, n_rows, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        t = tl.load(target_ptr + offs, mask=offs < n_rows, other=-100)
        acc += (t != -100).to(tl.float32)
    tl.store(count_ptr, tl.sum(acc, axis=0))


@triton.jit
def cross_entropy_fwd_kernel(input_ptr, target_ptr, count_ptr, out_ptr, n_cols, stride, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    row_ptr = input_ptr + row * stride
    m = float("-inf")
    s = 0.0
    for start in range(0, n_cols, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        x = tl.load(row_ptr + cols, mask=cols < n_cols, other=float("-inf"))
        block_max = tl.max(x, axis=0)
        new_m = tl.maximum(m, block_max)
        s = s * tl.exp(m - new_m) + tl.sum(tl.exp(x - new_m), axis=0)
        m = new_m
    target = tl.load(target_ptr + row)
    valid = target != -100
    x_target = tl.load(row_ptr + tl.where(valid, target, 0))
    loss = tl.where(valid, tl.log(s) + m - x_target, 0.0)
    tl.atomic_add(out_ptr, loss / tl.load(count_ptr))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, input, target):
        input = input.contiguous()
        n_rows, n_cols = input.shape
        out = torch.zeros([], device=input.device, dtype=torch.float32)
        count = torch.empty([], device=input.device, dtype=torch.float32)
        count_kernel[(1,)](target, count, n_rows, BLOCK=64)
        cross_entropy_fwd_kernel[(n_rows,)](
            input, target, count, out, n_cols, input.stride(0), BLOCK_SIZE=16
        )
        return out
