"""Test operator (gathers): token and position embeddings (two tables, ids and positions of the same shape),
the tokens scaled (by sqrt(dim), a constructor argument) and both added: one gather kernel, two takes."""

import torch
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, vocab, max_len, dim, scale):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(max_len, dim)
        self.scale = scale

    def forward(self, ids, positions):
        return self.tok(ids) * self.scale + self.pos(positions)


def get_inputs():
    return [torch.randint(0, 1000, (4, 256)), torch.arange(256).expand(4, 256).contiguous()]


def get_init_inputs():
    return [1000, 256, 64, 8.0]


def get_cpu_inputs():
    return [torch.randint(0, 11, (2, 5)), torch.randint(0, 7, (2, 5))]


def get_cpu_init_inputs():
    return [11, 7, 6, 8.0]


def get_cpu_shape_variants():
    return [[torch.randint(0, 11, (1, 3)), torch.randint(0, 7, (1, 3))]]
