"""KL divergence between two softmaxes (batchmean): on inputs scaled by 1e-3 both distributions are nearly uniform
and the loss is mostly fp32 rounding."""

import torch
import torch.nn.functional as F
from torch import nn


class Model(nn.Module):
    def forward(self, student, teacher):
        return F.kl_div(F.log_softmax(student, dim=-1), F.softmax(teacher, dim=-1), reduction="batchmean")


def get_inputs():
    return [torch.randn(16, 300), torch.randn(16, 300)]


def get_init_inputs():
    return []
