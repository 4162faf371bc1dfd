"""Parameter-free F.layer_norm over the last dim of an fp16 tensor."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp16"


class Model(nn.Module):
    def forward(self, x):
        return F.layer_norm(x, (x.shape[-1],))


def get_inputs():
    return [torch.randn(32768, 2048, dtype=torch.float16)]


def get_init_inputs():
    return []


def get_shape_variants():
    return [[torch.randn(2, 2048, dtype=torch.float16)]]


def get_cpu_inputs():
    return [torch.randn(5, 26, dtype=torch.float16)]


def get_cpu_shape_variants():
    return [[torch.randn(1, 8, dtype=torch.float16)]]
