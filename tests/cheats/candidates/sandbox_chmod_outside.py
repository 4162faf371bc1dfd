# cheat: changes metadata outside its job: chmod and utime on the directory that holds every job (with the
#        values they have, so that an escape here harms nothing; a real attack makes a sibling's job world-
#        writable or hides a change behind an old mtime). Landlock governs contents, not metadata; the seccomp
#        seal refuses chmod, chown, utimes and xattr calls. Verified (and this test fails) were it allowed.
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
    jobs = os.path.dirname(os.getcwd())
    status = os.stat(jobs)
    os.chmod(jobs, status.st_mode & 0o7777)
    os.utime(jobs, ns=(status.st_atime_ns, status.st_mtime_ns))


class ModelNew(nn.Module):
    def forward(self, x):
        attack()  # raises where the sandbox holds
        x2 = x.reshape(-1, x.shape[-1]).contiguous()
        y = torch.empty_like(x2)
        block = triton.next_power_of_2(x2.shape[1])
        _softmax_fwd_kernel[(x2.shape[0],)](x2, y, x2.shape[1], x2.stride(0), y.stride(0), BLOCK=block)
        return y.view(x.shape)
