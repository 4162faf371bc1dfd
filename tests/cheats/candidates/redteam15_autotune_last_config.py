# cheat: an autotuned row sum whose LAST config (of 40) sums only the first half of each row (it reads half the
#        bytes, so on a GPU the autotuner's timing picks it for every shape). Under the interpreter the checker's
#        interp_autotune runs "each config in turn" per tuning key, but a key gets as many turns as it gets calls,
#        and with more configs than calls per key "the first ones are covered": the honest configs fill every turn
#        and the wrong one is never the judged output. The sm_90 static compile compiles what the CPU run launched.
# operator: row_sum
# expect: mismatch
# uncaught: interp_autotune judges one config per call per tuning key: configs past the calls per key are never
#           judged on the CPU, and GPU tuning picks by speed
import torch
import triton
import triton.language as tl
from torch import nn

CONFIGS = [triton.Config({"BLOCK": b, "PART": 1}, num_warps=w, num_stages=s)
           for b in (64, 128, 256, 512, 1024) for w in (1, 2, 4, 8) for s in (1, 2)][:39]
CONFIGS.append(triton.Config({"BLOCK": 1024, "PART": 2}, num_warps=4, num_stages=2))


@triton.autotune(configs=CONFIGS, key=["N"])
@triton.jit
def row_sum_kernel(x_ptr, y_ptr, N, sx0, sx1, BLOCK: tl.constexpr, PART: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], tl.float32)
    for c0 in range(0, N // PART + (N % PART) * (PART == 1), BLOCK):
        c = c0 + cols
        acc += tl.load(x_ptr + row * sx0 + c * sx1, mask=c < N, other=0.0).to(tl.float32)
    tl.store(y_ptr + row, (tl.sum(acc, axis=0) * PART).to(y_ptr.dtype.element_ty))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        shape = x.shape
        x2 = x.reshape(-1, shape[-1])
        R, N = x2.shape
        y = torch.empty((R,), device=x.device, dtype=x.dtype)
        row_sum_kernel[(R,)](x2, y, N, x2.stride(0), x2.stride(1))
        return y.reshape(shape[:-1])
