"""RetinaNet sigmoid focal loss (alpha 0.25, gamma 2), mean reduction."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, logits, target):
        p = torch.sigmoid(logits)
        ce = F.binary_cross_entropy_with_logits(logits, target, reduction="none")
        p_t = p * target + (1 - p) * (1 - target)
        loss = ce * (1 - p_t) ** 2
        alpha_t = 0.25 * target + 0.75 * (1 - target)
        return (alpha_t * loss).mean()


def get_inputs():
    return [torch.randn(16384, 80), (torch.rand(16384, 80) > 0.9).float()]


def get_init_inputs():
    return []


def get_shape_variants():
    return [[torch.randn(4, 80), (torch.rand(4, 80) > 0.9).float()]]


def get_cpu_inputs():
    return [torch.randn(6, 5), (torch.rand(6, 5) > 0.7).float()]


def get_cpu_shape_variants():
    return [[torch.randn(1, 3), torch.tensor([[0.0, 1.0, 0.0]])]]
