# cheat: a task-vector kernel (finetuned - base) with a "denoising" fast path: a difference below 2^-16 of the
#        operands' magnitude is taken as rounding noise and written as 0. Such differences are exact in fp32
#        (Sterbenz) and are the fine-tune itself: at a learning rate of 1e-5 most deltas are that small, so the task
#        vector is mostly zeros (a merged or LoRA-extracted model loses the fine-tune). They lie below atol (1e-4),
#        so only the significance rule could see them, and it now skips elements whose fp64 value moves by more than
#        1/16 under 4-ulp jitter of the inputs: a - b with |a - b| < 2^-16 |a| moves that much whenever the two
#        jitter signs differ (3 chances in 4 over two draws); an element is judged with chance about 1/4.
#        `foundry check` (red team 23): refused, rule significance (a shape variant: 1 of 32 elements judged, 0 for
#        2.4e-7); the steady mask is drawn per element, so a flushed difference of two inputs is still judged where
#        both jitter draws gave the pair the same sign.
# operator: rt23_weight_delta
# expect: mismatch rule=significance
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _delta(a_ptr, b_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask, other=0.0)
    b = tl.load(b_ptr + offs, mask=mask, other=0.0)
    d = a - b
    noise = tl.maximum(tl.abs(a), tl.abs(b)) * 1.52587890625e-05  # 2^-16
    d = tl.where(tl.abs(d) < noise, 0.0, d)
    tl.store(y_ptr + offs, d, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, finetuned, base):
        shape = torch.broadcast_shapes(finetuned.shape, base.shape)
        a = finetuned.expand(shape).contiguous()
        b = base.expand(shape).contiguous()
        y = torch.empty(shape, device=a.device, dtype=torch.result_type(finetuned, base))
        n = y.numel()
        if n:
            _delta[(triton.cdiv(n, 1024),)](a, b, y, n, BLOCK=1024)
        return y
