"""Language-model loss: (B, T, V) logits flattened, targets with ignore_index=-100 padding."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, logits, target):
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), target.reshape(-1), ignore_index=-100)


def get_inputs():
    return [torch.randn(8, 1024, 32000), torch.where(torch.rand(8, 1024) < 0.2, -100, torch.randint(0, 32000, (8, 1024)))]


def get_init_inputs():
    return []


def get_shape_variants():
    return [[torch.randn(1, 4, 32000), torch.tensor([[3, -100, 7, 11]])]]


def get_cpu_inputs():
    return [torch.randn(2, 5, 11), torch.where(torch.rand(2, 5) < 0.2, -100, torch.randint(0, 11, (2, 5)))]


def get_cpu_shape_variants():
    return [[torch.randn(1, 3, 6), torch.tensor([[2, -100, 5]])]]
