"""Reference for training (rt9): rotary position embedding (RoFormer, LLaMA; Liger's and Unsloth's fused RoPE
kernels), y = x * cos + rotate_half(x) * sin over the last dimension, with the angles of each position in
buffers. Linear in x and without parameters: its input's gradient is rotate_half's transpose applied to the
upstream gradient, and its double backward has no term in x (only in the upstream gradient)."""

import torch
from torch import nn

FOUNDRY_TRAINING = True


class Model(nn.Module):
    def __init__(self, seq: int, dim: int):
        super().__init__()
        inv = 1.0 / (10000.0 ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim))
        freqs = torch.outer(torch.arange(seq, dtype=torch.float32), inv)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.register_buffer("cos", emb.cos())
        self.register_buffer("sin", emb.sin())

    def forward(self, x):
        half = x.shape[-1] // 2
        rotated = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
        return x * self.cos + rotated * self.sin


def get_inputs():
    return [torch.randn(4, 16, 512, 64)]


def get_init_inputs():
    return [512, 64]


def get_cpu_inputs():
    return [torch.randn(3, 8, 16)]


def get_cpu_shape_variants():
    return [[torch.randn(2, 2, 8, 16)]]  # (batch, heads, tokens, head dim)


def get_cpu_init_inputs():
    return [8, 16]


def get_shape_variants():
    return [[torch.randn(2, 8, 512, 64)]]
