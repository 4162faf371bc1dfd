"""Token embedding lookup with nn.Embedding on integer ids."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)

    def forward(self, ids):
        return self.embed(ids)


def get_inputs():
    return [torch.randint(0, 50257, (8, 1024,))]


def get_init_inputs():
    return [50257, 768]


def get_shape_variants():
    return [[torch.randint(0, 50257, (1, 1,))]]


def get_cpu_inputs():
    return [torch.randint(0, 30, (2, 5,))]


def get_cpu_init_inputs():
    return [30, 8]


def get_cpu_shape_variants():
    return [[torch.randint(0, 30, (1, 2,))]]
