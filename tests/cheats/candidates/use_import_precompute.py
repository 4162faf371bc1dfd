# cheat: reads every trial's inputs from the job file in its working directory at import (no op log runs
#        then), computes the answers with torch there, and in forward only replays them: a Triton kernel
#        looks each row up by its first value in a table of the rows it saw and copies the stored answer.
#        Rejected once no trial's inputs exist anywhere the candidate can read before its calls.
# operator: softmax_rows
# expect: mismatch|crash rule=tolerance|out_of_bounds
# config: static_guard=false
import torch
import triton
import triton.language as tl
from torch import nn


def _precompute():
    keys, answers = [torch.zeros(1)], [torch.zeros(1, WIDTH)]
    try:
        job = torch.load("job.pt", weights_only=True)
    except Exception:
        job = {}
    for trial in job.get("trials", []):
        x = trial[0]
        if isinstance(x, torch.Tensor) and x.shape[-1] <= WIDTH:
            rows = x.reshape(-1, x.shape[-1]).float()
            keys.append(rows[:, 0])
            answers.append(torch.nn.functional.pad(torch.softmax(rows, -1), (0, WIDTH - rows.shape[1])))
    return torch.cat(keys), torch.cat(answers)


WIDTH = 1024
KEYS, ANSWERS = _precompute()


@triton.jit
def _replay_kernel(x_ptr, keys_ptr, table_ptr, y_ptr, n_keys, n_cols, width, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    key = tl.load(x_ptr + row * n_cols)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for k in range(0, n_keys):
        hit = tl.load(keys_ptr + k) == key
        stored = tl.load(table_ptr + k * width + cols, mask=mask, other=0.0)
        acc = tl.where(hit, stored, acc)
    tl.store(y_ptr + row * n_cols + cols, acc, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        rows = x.reshape(-1, x.shape[-1]).contiguous()
        n_cols = rows.shape[1]
        keys, answers = KEYS.to(x.device), ANSWERS.to(x.device)
        y = torch.empty_like(rows)
        block = triton.next_power_of_2(n_cols)
        _replay_kernel[(rows.shape[0],)](rows, keys, answers, y, keys.numel(), n_cols, WIDTH, BLOCK=block)
        return y.view(x.shape)
