"""Reference: a graph readout (global add pooling of per-node totals): each node's features summed, then the node
totals summed per graph with index_add_ (nodes of a batch of graphs; seg[n] is node n's graph). The row sums over
the feature dimension are the operator's FLOPs; the index_add_ adds one value per node."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, graphs: int):
        super().__init__()
        self.graphs = graphs

    def forward(self, x, seg):
        out = torch.zeros(self.graphs, dtype=x.dtype, device=x.device)
        return out.index_add_(0, seg, x.sum(-1))


def get_inputs():
    return [torch.randn(65536, 512), torch.randint(0, 64, (65536,))]


def get_init_inputs():
    return [64]


def get_cpu_inputs():
    return [torch.randn(48, 8), torch.randint(0, 12, (48,))]


def get_cpu_init_inputs():
    return [12]
