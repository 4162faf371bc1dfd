# honest: launch settings looked up in module-level dicts (block per feature size, warps), read in forward
# operator: rms_norm
import torch
import triton
import triton.language as tl
from torch import nn

# feature size upper bound -> block size (chosen so one block covers a row)
BLOCK_TABLE = {64: 64, 256: 256, 1024: 1024, 4096: 4096}
LAUNCH_CONFIG = {"num_warps": 4, "num_stages": 1}


@triton.jit
def rmsnorm_kernel(x_ptr, w_ptr, out_ptr, x_row_stride, out_row_stride, n_cols, eps, BLOCK_SIZE: tl.constexpr):
    row_id = tl.program_id(0)
    col = tl.arange(0, BLOCK_SIZE)
    mask = col < n_cols
    x = tl.load(x_ptr + row_id * x_row_stride + col, mask=mask, other=0.0)
    mean_sq = tl.sum(x * x, axis=0) / n_cols
    inv_rms = 1.0 / tl.sqrt(mean_sq + eps)
    w = tl.load(w_ptr + col, mask=mask, other=0.0)
    tl.store(out_ptr + row_id * out_row_stride + col, x * inv_rms * w, mask=mask)


def pick_block(n_cols):
    for limit, block in sorted(BLOCK_TABLE.items()):
        if n_cols <= limit:
            return block
    return triton.next_power_of_2(n_cols)


class ModelNew(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        orig_shape = x.shape
        x = x.reshape(-1, orig_shape[-1]).contiguous()
        out = torch.empty_like(x)
        n_rows, n_cols = x.shape
        rmsnorm_kernel[(n_rows,)](
            x, self.weight, out, x.stride(0), out.stride(0), n_cols, self.eps,
            BLOCK_SIZE=pick_block(n_cols), **LAUNCH_CONFIG,
        )
        return out.view(orig_shape)
