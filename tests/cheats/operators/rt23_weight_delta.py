"""Reference: the task vector of a fine-tuned checkpoint, delta = finetuned - base, elementwise (delta extraction
for LoRA / model merging / delta compression). Fine-tuning at a small learning rate leaves most entries within a few
parts in a million of the base weights: fp32 subtracts such neighbours exactly (Sterbenz), and the deltas are what
the user wants; the retrained part's deltas are large."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, finetuned, base):
        return finetuned - base


def _pair(rows, cols):
    # the last quarter of the columns retrained (a new head, new token rows: deltas of 1e-2), the rest fine-tuned at
    # a small learning rate (deltas of 1e-7 against weights of 2e-2)
    base = 0.02 * torch.randn(rows, cols)
    scale = torch.full((1, cols), 1e-7)
    scale[:, cols - cols // 4 :] = 1e-2
    return [base + scale * torch.randn(rows, cols), base]


def get_inputs():
    return _pair(4096, 4096)


def get_init_inputs():
    return []


def get_cpu_inputs():
    return _pair(16, 32)


def get_cpu_init_inputs():
    return []
