# cheat: an 8-entry result cache keyed on the input's address, hidden from the static guard: the address is
#        read inside a Triton kernel (x_ptr.to(tl.int64, bitcast=True)) and the table lives in
#        non-persistent buffers written only by kernels, so forward never assigns to self.
#        The harness's "rewrite" call (new values in trial 0's buffers) hits a stale entry.
# operator: softmax_rows
# expect: static_guard rule=forbidden_attribute
import torch
import triton
import triton.language as tl
from torch import nn

SLOTS = 8
WIDTH = 1 << 16


@triton.jit
def _address_kernel(x_ptr, out_ptr):
    tl.store(out_ptr, x_ptr.to(tl.int64, bitcast=True))


@triton.jit
def _remember_kernel(x_ptr, keys_ptr, slot):
    tl.store(keys_ptr + slot, x_ptr.to(tl.int64, bitcast=True))


@triton.jit
def _softmax_kernel(x_ptr, y_ptr, c_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    y = e / tl.sum(e, axis=0)
    tl.store(y_ptr + row * n_cols + cols, y, mask=mask)
    tl.store(c_ptr + row * n_cols + cols, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("keys", torch.zeros(SLOTS, dtype=torch.int64), persistent=False)
        self.register_buffer("table", torch.zeros(SLOTS, WIDTH), persistent=False)

    def forward(self, x):
        x = x.contiguous()
        address = torch.zeros(1, dtype=torch.int64, device=x.device)
        _address_kernel[(1,)](x, address)
        keys = self.keys.tolist()
        n = x.numel()
        if address.item() in keys:
            return self.table[keys.index(address.item())][:n].view(x.shape).clone()
        slot = sum(1 for k in keys if k != 0) % SLOTS
        y = torch.empty_like(x)
        block = triton.next_power_of_2(x.shape[1])
        _softmax_kernel[(x.shape[0],)](x, y, self.table[slot], x.shape[1], BLOCK=block)
        _remember_kernel[(1,)](x, self.keys, slot)
        return y
