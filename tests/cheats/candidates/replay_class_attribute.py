# cheat: keeps its call log and last result in CLASS attributes (ModelNew.log), which the static guard
#        does not treat as state (it checks self.* in forward and module-level containers), and replays
#        the last result after 3 calls when the size matches
# operator: softmax_rows
# expect: state_dependent
# config: static_guard=false
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _softmax_kernel(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * n_cols + cols, e / tl.sum(e, axis=0), mask=mask)


class ModelNew(nn.Module):
    log = []

    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        block = triton.next_power_of_2(x.shape[1])
        if len(ModelNew.log) >= 3 and ModelNew.log[-1].shape == x.shape:
            _softmax_kernel[(1,)](x, y, 0, BLOCK=block)  # a launch, for the count
            return ModelNew.log[-1].clone()
        _softmax_kernel[(x.shape[0],)](x, y, x.shape[1], BLOCK=block)
        ModelNew.log.append(y.clone())
        return y
