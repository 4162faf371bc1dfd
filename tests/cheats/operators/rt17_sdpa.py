"""Reference: scaled dot-product attention softmax(q k^T / sqrt(d)) v over (B, H, S, D) inputs (an attention layer's
core) clamped to fp16's range as HF T5 clamps its hidden states, TF32 class: a kernel may use tl.dot's default
precision (TF32 tensor cores) for both products."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "tf32"


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        o = F.scaled_dot_product_attention(q, k, v)
        clamp_value = torch.finfo(torch.float16).max - 1000  # HF T5's clamp of hidden states (fp16 safety)
        return torch.clamp(o, min=-clamp_value, max=clamp_value)


def get_inputs():
    return [torch.randn(2, 8, 256, 64), torch.randn(2, 8, 256, 64), torch.randn(2, 8, 256, 64)]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.randn(1, 2, 8, 16), torch.randn(1, 2, 8, 16), torch.randn(1, 2, 8, 16)]
