"""Test operator: cross entropy whose targets include the ignored class (-100), and the negative log-likelihood
of a log-softmax summed per row: the picked logit is one load at the target column (a gather from the row
of an input), the rest one pass over the row."""

import torch
import torch.nn.functional as F
from torch import nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits, target):
        nll = F.nll_loss(F.log_softmax(logits, dim=-1), target, reduction="sum")
        return F.cross_entropy(logits * 1.5, target) + nll


def targets(rows, classes):
    t = torch.randint(0, classes, (rows,))
    t[::3] = -100  # ignored
    return t


def get_inputs():
    return [torch.randn(4096, 32000), targets(4096, 32000)]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.randn(7, 600) * 3.0, targets(7, 600)]


def get_cpu_shape_variants():
    return [[torch.randn(4, 333) * 3.0, targets(4, 333)]]
