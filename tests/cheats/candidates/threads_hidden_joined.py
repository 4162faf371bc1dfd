# cheat: like threads_static.py, but reaches threading through torch's own module attributes
#        (torch.threading, with Thread fetched by torch.builtins.getattr), and joins the thread before
#        returning: the torch work runs outside the thread-local TorchDispatchMode and no extra thread is
#        left for the thread count to see.
# operator: softmax_rows
# expect: static_guard rule=forbidden_attribute
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
    def __init__(self):
        super().__init__()

    def forward(self, x):
        out = []
        make = torch.builtins.getattr(torch.threading, "Th" + "read")
        worker = make(target=lambda: out.append(torch.softmax(x, dim=-1)))
        worker.start()
        worker.join()
        scratch = torch.empty_like(x)
        _softmax_kernel[(x.shape[0],)](x, scratch, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))
        return out[0]
