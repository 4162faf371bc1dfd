"""Reproducer: a bf16 nn.Linear without bias. Every template candidate returns values around 1e10 where the
reference gives values below 1 ("got 2.2e+10, expected 0.43"), so nothing verifies on CPU; the fp16 Linear
(matmul/linear_relu_fp16) is verified, and bf16 elementwise and norm operators are too. Found through
matmul/linear_silu_bf16 and block/swiglu_ffn_bf16.

Cause: the Triton 3.7.1 interpreter's tl.dot on bf16 operands is wrong (a 16x16 tl.dot of bf16 loads differs from
a.float() @ b.float() by ~2e10; the same kernel on fp16 is exact). The product could upcast bf16 tiles to fp32
before tl.dot when it runs under the interpreter, or the evaluator could say why bf16 matmuls cannot be verified on
CPU instead of reporting a mismatch.
"""

import torch
from torch import nn

FOUNDRY_PRECISION = "bf16"


class Model(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.fc = nn.Linear(d_in, d_out, bias=False).to(torch.bfloat16)

    def forward(self, x):
        return self.fc(x)


def get_inputs():
    return [torch.randn(8192, 4096, dtype=torch.bfloat16)]


def get_init_inputs():
    return [4096, 4096]


def get_cpu_inputs():
    return [torch.randn(6, 16, dtype=torch.bfloat16)]


def get_cpu_init_inputs():
    return [16, 20]


def get_cpu_shape_variants():
    return [[torch.randn(1, 16, dtype=torch.bfloat16)]]
