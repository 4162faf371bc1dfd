# cheat: none: an honest softmax in the styles LLMs write that the denylist guard refused: a Triton submodule
#        held in nn.Sequential, block sizes in module-, class- and instance-level dicts read in forward, a
#        parameter named input and a local named id, tensor.chunk, and a trailing main block (never run in the
#        worker) that seeds, prints and times. The allowlist guard must let it through.
# operator: softmax_rows
# expect: verified
import torch
import triton
import triton.language as tl
from torch import nn

BLOCKS = {"min": 16, "max": 4096}


@triton.jit
def _softmax_row_kernel(x_ptr, y_ptr, n_cols, stride_x, stride_y, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * stride_y + cols, e / tl.sum(e, axis=0), mask=mask)


class TritonSoftmax(nn.Module):
    WARPS = {"narrow": 1, "wide": 4}

    def __init__(self):
        super().__init__()
        self.settings = {"min_block": BLOCKS["min"]}

    def forward(self, input):
        rows = input.reshape(-1, input.shape[-1]).contiguous()
        out = torch.empty_like(rows)
        block = max(triton.next_power_of_2(rows.shape[1]), self.settings["min_block"])
        warps = self.WARPS["narrow"] if block <= 256 else self.WARPS["wide"]
        _softmax_row_kernel[(rows.shape[0],)](
            rows, out, rows.shape[1], rows.stride(0), out.stride(0), BLOCK=block, num_warps=warps
        )
        return out.view(input.shape)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(TritonSoftmax())

    def forward(self, input):
        id = input.shape[0]
        halves = input.chunk(2, dim=0) if id > 1 << 30 else (input,)
        return torch.cat([self.body(h) for h in halves]) if len(halves) > 1 else self.body(halves[0])


if __name__ == "__main__":
    import time

    torch.manual_seed(0)
    x = torch.randn(8, 100)
    start = time.perf_counter()
    print(torch.allclose(ModelNew()(x), torch.softmax(x, dim=-1)), time.perf_counter() - start)
