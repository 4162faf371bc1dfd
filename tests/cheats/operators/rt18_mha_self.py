"""Reference: a self-attention block, nn.MultiheadAttention(x, x, x) (batch_first, no weights returned): the fused
in-projection, scaled dot-product attention over the heads and the out-projection, TF32 class: a kernel may use
tl.dot's default precision (TF32 tensor cores) for all four products."""

import torch
from torch import nn

FOUNDRY_PRECISION = "tf32"


class Model(nn.Module):
    def __init__(self, embed, heads):
        super().__init__()
        self.mha = nn.MultiheadAttention(embed, heads, batch_first=True)

    def forward(self, x):
        return self.mha(x, x, x, need_weights=False)[0]


def get_inputs():
    return [torch.randn(8, 512, 1024)]


def get_init_inputs():
    return [1024, 16]


def get_cpu_inputs():
    return [torch.randn(2, 8, 32)]


def get_cpu_init_inputs():
    return [32, 2]
