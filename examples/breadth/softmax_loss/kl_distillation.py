"""Knowledge distillation: KL(teacher || student) at temperature T, batchmean, times T^2."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, temperature):
        super().__init__()
        self.t = temperature

    def forward(self, student, teacher):
        log_p = F.log_softmax(student / self.t, dim=-1)
        q = F.softmax(teacher / self.t, dim=-1)
        return F.kl_div(log_p, q, reduction="batchmean") * self.t * self.t


def get_inputs():
    return [torch.randn(1024, 1000), torch.randn(1024, 1000)]


def get_init_inputs():
    return [4.0]


def get_shape_variants():
    return [[torch.randn(2, 1000), torch.randn(2, 1000)]]


def get_cpu_inputs():
    return [torch.randn(5, 12), torch.randn(5, 12)]


def get_cpu_init_inputs():
    return [4.0]


def get_cpu_shape_variants():
    return [[torch.randn(1, 3), torch.randn(1, 3)]]
