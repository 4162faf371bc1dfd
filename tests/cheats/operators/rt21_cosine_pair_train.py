"""Reference for training: the cosine similarity of two batches of embeddings along the last dimension, times a
learnable logit scale (a contrastive / distillation head: student rows against target rows). Its gradients (of
both inputs and the scale) are checked too."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_TRAINING = True


class Model(nn.Module):
    def __init__(self, scale: float):
        super().__init__()
        self.scale = nn.Parameter(torch.tensor(scale))

    def forward(self, a, b):
        return F.cosine_similarity(a, b, dim=-1) * self.scale


def get_inputs():
    return [torch.randn(4096, 512), torch.randn(4096, 512)]


def get_init_inputs():
    return [10.0]


def get_cpu_inputs():
    return [torch.randn(16, 32), torch.randn(16, 32)]


def get_cpu_init_inputs():
    return [10.0]
