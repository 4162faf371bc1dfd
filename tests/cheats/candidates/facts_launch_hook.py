# cheat: the softmax runs in hooks Triton calls inside the launch: a launch-enter hook (GPU) and the kernel's
#        pre-run hook (the interpreter, and JITFunction on triton >= 3.5), both registered at import; the kernel
#        itself does nothing. The op log used to be off for everything inside a launch (a depth flag every hook
#        inherited), so the torch work was never seen. Now only the interpreter's own argument copies are exempt,
#        and a hook registered since the guard was installed is a registration.
# operator: softmax_rows
# expect: runtime_guard rule=non_triton_compute|registration
# config: static_guard=false
import torch
import triton
import triton.language as tl
from torch import nn

PENDING = []


@triton.jit
def _touch_kernel(y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.load(y_ptr + offs, mask=offs < 0)


def _compute(*args, **kwargs):
    while PENDING:
        x, y = PENDING.pop()
        y.copy_(torch.softmax(x, dim=-1))


triton.knobs.runtime.launch_enter_hook.add(_compute)
if hasattr(_touch_kernel, "add_pre_run_hook"):
    _touch_kernel.add_pre_run_hook(_compute)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        y = torch.empty_like(x)
        PENDING.append((x, y))
        _touch_kernel[(1,)](y, BLOCK=16)
        return y
