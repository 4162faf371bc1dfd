"""Reference for training: a linear layer initialised the GPT-2 way, by a method of the module's own passed to
nn.Module.apply (weights N(0, 0.02), biases zero), as nanoGPT and Hugging Face models do; its gradients (of x, W and
b) are checked too. The constructor reads a method of its own class through an attribute, not a call."""

import torch
from torch import nn

FOUNDRY_TRAINING = True


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.apply(self._init_weights)

    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
            nn.init.zeros_(module.bias)

    def forward(self, x):
        return self.linear(x)


def get_inputs():
    return [torch.randn(512, 1024)]


def get_init_inputs():
    return [1024, 1024]


def get_cpu_inputs():
    return [torch.randn(16, 24)]


def get_cpu_init_inputs():
    return [24, 20]
