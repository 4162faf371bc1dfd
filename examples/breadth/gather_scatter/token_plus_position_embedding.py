"""GPT-2 input: token embedding plus learned position embedding of arange(T)."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, vocab, max_len, dim):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(max_len, dim)

    def forward(self, ids):
        positions = torch.arange(ids.shape[1], device=ids.device)
        return self.tok(ids) + self.pos(positions)


def get_inputs():
    return [torch.randint(0, 50257, (8, 1024,))]


def get_init_inputs():
    return [50257, 1024, 768]


def get_shape_variants():
    return [[torch.randint(0, 50257, (1, 3,))]]


def get_cpu_inputs():
    return [torch.randint(0, 20, (2, 6,))]


def get_cpu_init_inputs():
    return [20, 8, 6]


def get_cpu_shape_variants():
    return [[torch.randint(0, 20, (1, 1,))]]
