# honest: broadcast add + relu on a .view(-1, C) of the input, 2-D tiles with x.stride(0), the bias loaded
#   once per tile; @triton.heuristics for an EVEN_C flag
# operator: add_relu_bcast
import torch
import triton
import triton.language as tl
from torch import nn


@triton.heuristics({"EVEN_C": lambda args: args["C"] % args["BLOCK_C"] == 0})
@triton.jit
def add_bias_relu_kernel(x_ptr, bias_ptr, out_ptr, R, C, stride_x, stride_out,
                         BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr, EVEN_C: tl.constexpr):
    pid_r = tl.program_id(0)
    pid_c = tl.program_id(1)
    rows = pid_r * BLOCK_R + tl.arange(0, BLOCK_R)
    cols = pid_c * BLOCK_C + tl.arange(0, BLOCK_C)
    if EVEN_C:
        bias = tl.load(bias_ptr + cols)
        mask = (rows[:, None] < R) & (cols[None, :] < BLOCK_C * (pid_c + 1))
    else:
        bias = tl.load(bias_ptr + cols, mask=cols < C, other=0.0)
        mask = (rows[:, None] < R) & (cols[None, :] < C)
    x = tl.load(x_ptr + rows[:, None] * stride_x + cols[None, :], mask=mask, other=0.0)
    y = tl.maximum(x + bias[None, :], 0.0)
    tl.store(out_ptr + rows[:, None] * stride_out + cols[None, :], y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, bias):
        C = x.shape[-1]
        x2 = x.contiguous().view(-1, C)
        bias = bias.contiguous()
        out = torch.empty_like(x2)
        R = x2.shape[0]
        BLOCK_R, BLOCK_C = 8, 16
        grid = (triton.cdiv(R, BLOCK_R), triton.cdiv(C, BLOCK_C))
        add_bias_relu_kernel[grid](x2, bias, out, R, C, x2.stride(0), out.stride(0), BLOCK_R=BLOCK_R, BLOCK_C=BLOCK_C)
        return out.view(x.shape)
