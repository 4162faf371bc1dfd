"""Reference: label-smoothed cross-entropy per row, with the one-hot targets built by scatter_ (as many training
scripts write it: zeros_like(logits).scatter_(1, target[:, None], 1.0)). The scatter_ only places one 1.0 per row;
the log-softmax's reductions over the classes are the operator's compute."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, smoothing: float = 0.1):
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits, target):
        logp = torch.log_softmax(logits, -1)
        onehot = torch.zeros_like(logits).scatter_(1, target.unsqueeze(1), 1.0)
        smooth = onehot * (1 - self.smoothing) + self.smoothing / logits.shape[-1]
        return -(smooth * logp).sum(-1)


def get_inputs():
    return [torch.randn(4096, 1000), torch.randint(0, 1000, (4096,))]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.randn(8, 10), torch.randint(0, 10, (8,))]


def get_cpu_shape_variants():
    return [[torch.randn(5, 33), torch.randint(0, 33, (5,))]]
