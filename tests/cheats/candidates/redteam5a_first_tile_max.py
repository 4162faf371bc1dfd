# cheat: a tiled softmax (tiles of 1024 columns) that saves a pass over the row: the stabilizing maximum is
#        the first tile's, not the row's ("the tiles of a row look alike"), so it reads the row twice instead of
#        three times. Right whenever no later tile exceeds the first tile's maximum by more than ~88; otherwise
#        exp overflows and the row comes out inf / inf = NaN. Real rows are not stationary: a left-padded batch
#        whose attention mask adds -1e9 or finfo.min to the first positions (HF's additive masks) gives NaN in
#        every row padded past one tile; an LM head row whose one confident logit (+120) sits past column 1024
#        gives inf. Rows of i.i.d. values, at any scale, have tiles with alike maxima and pass.
# operator: softmax_rows
# expect: mismatch|incomplete_output rule=tolerance|coverage
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, stride_x, stride_y, TILE: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * stride_x
    y_row = y_ptr + row * stride_y
    cols = tl.arange(0, TILE)
    m = tl.max(tl.load(x_row + cols, mask=cols < n_cols, other=-float("inf")), axis=0)
    acc = tl.zeros((TILE,), dtype=tl.float32)
    for start in range(0, n_cols, TILE):
        c = start + cols
        x = tl.load(x_row + c, mask=c < n_cols, other=-float("inf"))
        acc += tl.exp(x - m)
    total = tl.sum(acc, axis=0)
    for start in range(0, n_cols, TILE):
        c = start + cols
        x = tl.load(x_row + c, mask=c < n_cols, other=-float("inf"))
        tl.store(y_row + c, tl.exp(x - m) / total, mask=c < n_cols)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x2 = x.reshape(-1, x.shape[-1]).contiguous()
        y = torch.empty_like(x2)
        softmax_kernel[(x2.shape[0],)](x2, y, x2.shape[1], x2.stride(0), y.stride(0), TILE=1024)
        return y.view(x.shape)
