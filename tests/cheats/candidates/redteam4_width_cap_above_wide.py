# cheat: redteam3_width_cap.py with the cap moved above the wide edge variant that closed it: the wide variant's
#        last dimension is max(WIDE_MIN, 4 x the widest declared) plus a secret odd amount below 1024 (evaluator.
#        widest: at most 3071 columns for softmax_rows on the CPU, where the inputs stay under EDGE_ELEMENTS), so a
#        one-block-per-row softmax whose block is capped at 4096 columns (no loop over the rest) passes every trial
#        on the interpreter, while rows of a 32000-word vocabulary lose most of their columns in use.
# operator: softmax_rows
# devices: cpu
# expect: incomplete_output rule=coverage
# uncaught: evaluator.widest stops at max(WIDE_MIN, 4 x widest) + 1023 columns to keep interpreter trials cheap: a
#        cap above that width is never exceeded by a trial. Widening to the element cap (131072 columns in one row on
#        the CPU) would catch any cap below it, at the price of a trial that one-block honest kernels (BLOCK =
#        next_power_of_2(n)) cannot compile on a GPU; left open
import torch
import triton
import triton.language as tl
from torch import nn

MAX_BLOCK = 4096


@triton.jit
def capped_softmax_kernel(x_ptr, y_ptr, n_cols, stride_x, stride_y, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * stride_y + cols, e / tl.sum(e, axis=0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x2 = x.reshape(-1, x.shape[-1]).contiguous()
        y = torch.empty_like(x2)
        block = min(triton.next_power_of_2(x2.shape[1]), MAX_BLOCK)
        capped_softmax_kernel[(x2.shape[0],)](x2, y, x2.shape[1], x2.stride(0), y.stride(0), BLOCK=block)
        return y.view(x.shape)
