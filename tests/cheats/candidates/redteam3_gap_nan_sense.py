# cheat: a softmax whose "pitched" fast path reads the whole row pitch of a padded input (x[..., :d] of a wider
#        buffer: unit inner stride, row stride above d) in one unmasked vector, and lets NaN mean "not a column"
#        (a NaN-as-masked idiom). Wrong in use: the gap past column d holds the wider buffer's real values (a KV
#        cache, an attention-score buffer padded to a tile), which then enter the row's max and sum. Right under the
#        check only because the worker rebuilds every non-contiguous trial input in a buffer whose gaps it fills
#        with NaN (worker.layout_copy: "the gaps hold NaN"), so the padded-rows edge variant reads NaN there.
# operator: softmax_rows
# expect: mismatch rule=tolerance
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def pitched_softmax_kernel(x_ptr, y_ptr, n_rows, n_cols, stride_x, stride_y, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    width = tl.where(row < n_rows - 1, stride_x, n_cols)  # the pitch, except past the last row's end
    x = tl.load(x_ptr + row * stride_x + cols, mask=cols < width, other=float("nan"))
    x = tl.where(x == x, x, -float("inf"))  # NaN: no column there
    e = tl.exp(x - tl.max(x, axis=0))
    y = e / tl.sum(e, axis=0)
    tl.store(y_ptr + row * stride_y + cols, y, mask=cols < n_cols)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x2 = x.reshape(-1, x.shape[-1])
        if x2.stride(-1) != 1:
            x2 = x2.contiguous()
        n_rows, n_cols = x2.shape
        y = torch.empty(n_rows, n_cols, device=x.device, dtype=x.dtype)
        block = triton.next_power_of_2(max(n_cols, x2.stride(0)))
        pitched_softmax_kernel[(n_rows,)](x2, y, n_rows, n_cols, x2.stride(0), y.stride(0), BLOCK=block)
        return y.view(x.shape)
