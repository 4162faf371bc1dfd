"""Reproducer: a KL-divergence loss (batchmean) whose value is a sum of cancelling terms. Under the evaluator's
"inputs x0.001" transform both distributions are nearly uniform and the loss is fp32 rounding noise around 0
(about 1e-7 to 1e-6), yet the tolerance is scaled to that value (atol about 1e-9 to 1e-8), so a correct
kernel is rejected as a mismatch ("got 9.33e-07, expected 7.93e-07 ... atol=7.93e-09"). Found through
softmax_loss/kl_distillation."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, student, teacher):
        return F.kl_div(F.log_softmax(student, dim=-1), F.softmax(teacher, dim=-1), reduction="batchmean")


def get_inputs():
    return [torch.randn(1024, 1000), torch.randn(1024, 1000)]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.randn(5, 12), torch.randn(5, 12)]


def get_cpu_shape_variants():
    return [[torch.randn(1, 3), torch.randn(1, 3)]]
