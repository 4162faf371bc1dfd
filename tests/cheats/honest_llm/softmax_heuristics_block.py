# honest: @triton.heuristics deriving BLOCK_SIZE from the row length, a variable named `input`
# operator: softmax_fixed
import torch
import triton
import triton.language as tl
import torch.nn as nn


@triton.heuristics({"BLOCK_SIZE": lambda args: triton.next_power_of_2(args["n_cols"])})
@triton.jit
def _softmax_kernel(
    out_ptr,
    in_ptr,
    stride_in,
    stride_out,
    n_cols,
    BLOCK_SIZE: tl.constexpr,
):
    row = tl.program_id(axis=0)
    offsets = tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_cols
    vals = tl.load(in_ptr + row * stride_in + offsets, mask=mask, other=float("-inf"))
    vals = vals - tl.max(vals, axis=0)
    num = tl.exp(vals)
    den = tl.sum(num, axis=0)
    tl.store(out_ptr + row * stride_out + offsets, num / den, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, input):
        input = input.contiguous()
        n_cols = input.shape[-1]
        input_2d = input.view(-1, n_cols)
        output = torch.empty_like(input_2d)
        grid = (input_2d.shape[0],)
        _softmax_kernel[grid](output, input_2d, input_2d.stride(0), output.stride(0), n_cols)
        return output.view_as(input)
