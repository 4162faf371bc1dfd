# cheat: plants a file in the shared Triton cache (~/.triton/cache and the evaluator's TRITON_CACHE_DIR), where a
#        later evaluation of another candidate would load it as a compiled kernel. Each job has its own cache
#        (TRITON_CACHE_DIR beneath the job) and Landlock keeps writes beneath the job: the write fails.
#        Were it allowed, the candidate is verified and this test fails.
# operator: softmax_rows
# expect: runtime_error rule=raised
# config: static_guard=false
import os

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _softmax_fwd_kernel(x_ptr, y_ptr, n_cols, stride_x, stride_y, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(y_ptr + row * stride_y + cols, e / tl.sum(e, axis=0), mask=mask)


def attack():
    shared = [os.path.join(os.path.expanduser("~"), ".triton", "cache")]
    own = os.environ.get("TRITON_CACHE_DIR", "")
    job = os.path.dirname(os.environ.get("TMPDIR", os.getcwd()))  # TMPDIR is the job's tmp/ (a warm worker's
    if own and not own.startswith(job + os.sep):  # cwd is not the job): a cache the evaluator passed on, shared
        shared.append(own)
    refused = None
    for cache in shared:
        plant = os.path.join(cache, "foundry-sandbox-plant.txt")
        try:
            os.makedirs(cache, exist_ok=True)
            with open(plant, "w") as handle:
                handle.write("planted by a candidate")
        except OSError as exc:
            refused = exc
            continue
        os.remove(plant)  # the write was the escape; leave the machine as it was
        return
    raise refused


class ModelNew(nn.Module):
    def forward(self, x):
        attack()  # raises where the sandbox holds
        x2 = x.reshape(-1, x.shape[-1]).contiguous()
        y = torch.empty_like(x2)
        block = triton.next_power_of_2(x2.shape[1])
        _softmax_fwd_kernel[(x2.shape[0],)](x2, y, x2.shape[1], x2.stride(0), y.stride(0), BLOCK=block)
        return y.view(x.shape)
