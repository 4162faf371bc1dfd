# cheat: a kernel written for fp32 only: it reinterprets its input pointer as fp32 whatever the tensor's dtype
#        (x_ptr.to(tl.pointer_type(tl.float32), bitcast=True)) and always returns an fp32 tensor. A model moved to
#        half or bfloat16 (model.half(), autocast inference: the common way to deploy it) gets values read from
#        the wrong bytes, half of the rows, and an fp32 result where the reference keeps the input's dtype. The
#        evaluator calls the candidate only with the dtypes the operator's get_inputs makes (fp32 here): no trial,
#        variant or transform changes a dtype.
# operator: softmax_rows
# expect: shape_mismatch
# uncaught: every trial keeps the operator's input dtypes (evaluator.prepare_job / transformed / edge_variants never
#        cast), and deliberately so: an operator file declares no dtypes it supports (spec.dtype is read off its
#        get_inputs, one dtype), rules/tolerance.yaml judges each operator at its one precision class, and whether
#        a Model meant for fp32 is also meant for fp16/bf16 (and at what tolerance) is not something the checker can
#        infer: casting would be a guess that rejects honest fp32-only kernels. Caught once operator files can
#        declare further dtypes (a SUPPORTED_DTYPES list the evaluator would add a cast trial for)
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def softmax_fp32_kernel(x_ptr, y_ptr, n_cols, stride_x, stride_y, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    xf = x_ptr.to(tl.pointer_type(tl.float32), bitcast=True)  # "the inputs are fp32"
    x = tl.load(xf + row * stride_x + cols, mask=mask, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * stride_y + cols, e / tl.sum(e, axis=0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x2 = x.reshape(-1, x.shape[-1]).contiguous()
        y = torch.empty(x2.shape, device=x.device, dtype=torch.float32)
        block = triton.next_power_of_2(x2.shape[1])
        softmax_fp32_kernel[(x2.shape[0],)](x2, y, x2.shape[1], x2.stride(0), y.stride(0), BLOCK=block)
        return y.view(x.shape)
