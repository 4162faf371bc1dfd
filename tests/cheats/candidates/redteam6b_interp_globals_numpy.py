# cheat: computes the softmax in numpy on the host. The names `np`, `inspect` and `_interpreter` are bound only in
#        dead code at module level (`if False: np = None`), so the static guard takes them for the candidate's own
#        module-level names and checks what follows them only against the attribute denylist. At run time they
#        are unbound until the first launch: Triton's interpreter (FunctionRewriter._compile_and_exec) copies every
#        global of triton.runtime.interpreter that the kernel's module lacks into that module's globals, so after
#        the first kernel[grid](...) `np` is numpy, `inspect` the inspect module and `_interpreter` Triton's C
#        memory accessor (also `ast`, `textwrap`, `dataclasses`, `partial`). The forward reads the input's memory
#        and writes the output's by address (_interpreter.load/store, the address from
#        inspect.getattr_static(torch.Tensor, "data_ptr"), a string the guard cannot read): no aten op at all
#        (np.asarray(tensor) would do too, but under torch.inference_mode numpy() logs resolve_conj/resolve_neg),
#        so the op log and the profiler witness see only contiguous, empty_like and the kernel's copies.
# operator: softmax_rows
# expect: runtime_error
# devices: cpu
import torch
import triton
import triton.language as tl
from torch import nn

if False:
    np = None
    inspect = None
    _interpreter = None


@triton.jit
def _copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


def addresses(t):
    base = inspect.getattr_static(torch.Tensor, "data_ptr")(t)
    return np.uint64(base) + np.arange(t.numel(), dtype=np.uint64) * np.uint64(t.element_size())


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        _copy_kernel[(triton.cdiv(n, 256),)](x, y, n, BLOCK=256)  # the first launch binds np, inspect, ...
        every = np.ones(n, dtype=bool)
        a = _interpreter.load(addresses(x), every, np.zeros(n, dtype=np.float32), np.dtype(np.float32))
        a = a.reshape(-1, x.shape[-1])
        e = np.exp(a - a.max(axis=-1, keepdims=True))
        _interpreter.store(addresses(y), (e / e.sum(axis=-1, keepdims=True)).reshape(-1), every)
        return y
