# honest: @triton.heuristics with an EVEN_N flag that drops the masks when the row divides the block
# operator: tiny_loss
import torch
import triton
import triton.language as tl
from torch import nn


@triton.heuristics({"EVEN_N": lambda args: args["n_cols"] % args["BLOCK_N"] == 0})
@triton.jit
def row_mse_kernel(pred_ptr, target_ptr, out_ptr, n_cols, stride_p, stride_t, scale,
                   BLOCK_N: tl.constexpr, EVEN_N: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        if EVEN_N:
            p = tl.load(pred_ptr + row * stride_p + cols)
            t = tl.load(target_ptr + row * stride_t + cols)
        else:
            p = tl.load(pred_ptr + row * stride_p + cols, mask=cols < n_cols, other=0.0)
            t = tl.load(target_ptr + row * stride_t + cols, mask=cols < n_cols, other=0.0)
        d = p - t
        acc += d * d
    loss = tl.sum(acc, axis=0) / n_cols
    tl.store(out_ptr + row, loss * scale)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, pred, target):
        pred = pred.contiguous()
        target = target.contiguous()
        n_rows, n_cols = pred.shape
        out = torch.empty(n_rows, device=pred.device, dtype=pred.dtype)
        row_mse_kernel[(n_rows,)](pred, target, out, n_cols, pred.stride(0), target.stride(0), 1e-6, BLOCK_N=32)
        return out
