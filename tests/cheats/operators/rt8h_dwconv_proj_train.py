"""Reference for training: a depthwise 3-tap convolution plus a pointwise channel projection (a ConvNeXt/MobileNet
style token mixer, y = dwconv(x) + P x), with the projection written as an einsum (a batched matrix product, not a
convolution). The depthwise convolution is cheap (3 multiply-adds per output); the projection is the matrix
product that carries the FLOPs, forward and backward."""

import torch
from torch import nn

FOUNDRY_TRAINING = True


class Model(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.dw = nn.Conv1d(channels, channels, 3, padding=1, groups=channels, bias=False)
        self.proj = nn.Parameter(torch.randn(channels, channels) / channels**0.5)

    def forward(self, x):
        return self.dw(x) + torch.einsum("oc,bcl->bol", self.proj, x)


def get_inputs():
    return [torch.randn(16, 256, 1024)]


def get_init_inputs():
    return [256]


def get_cpu_inputs():
    return [torch.randn(2, 8, 12)]


def get_cpu_init_inputs():
    return [8]
