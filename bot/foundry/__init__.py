"""Kernel Foundry: diagnosis-driven evolutionary optimizer of PyTorch operators into Triton kernels."""

__version__ = "0.1.0"
