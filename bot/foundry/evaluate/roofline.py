"""Roofline facts: bytes that must move, FLOPs (torch's FlopCounterMode), and ceilings measured once
per process on the current GPU."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import torch
from torch import nn

from foundry.core.records import Roofline
from foundry.evaluate.timing import time_cuda

LATENCY_FLOOR_MS = 0.005  # below this, launch latency dominates whatever the kernel does


def tensor_bytes(values: Sequence[Any]) -> int:
    return sum(v.numel() * v.element_size() for v in values if isinstance(v, torch.Tensor))


def count_flops(model: nn.Module, inputs: Sequence[Any]) -> int:
    from torch.utils.flop_counter import FlopCounterMode

    counter = FlopCounterMode(display=False)
    with torch.no_grad(), counter:
        model(*inputs)
    return int(counter.get_total_flops())


@functools.cache
def ceilings(device_index: int, dtype: torch.dtype) -> tuple[float, float]:
    """(copy bandwidth in GB/s counting read + write, matmul TFLOP/s for dtype), measured once.

    For fp32 the compute ceiling is the faster of cuBLAS's fp32 matmul (TF32 off) and a third of its TF32
    matmul: a kernel may reach fp32 accuracy on tensor cores with three TF32 products (3xTF32), which
    beats the plain fp32 matmul, and its floor must not be the slower one."""
    device = torch.device("cuda", device_index)
    n = 256 * 1024 * 1024
    src = torch.empty(n, dtype=torch.float32, device=device).normal_()
    dst = torch.empty_like(src)
    copy = time_cuda(lambda a, b: b.copy_(a), [[src, dst]], trials=30, warmup=3, flush=False)
    bandwidth = 2 * src.numel() * src.element_size() / (copy.median_ms * 1e-3) / 1e9
    del src, dst
    size = 8192
    mm_dtype = dtype if dtype in (torch.float16, torch.bfloat16) else torch.float32
    a = torch.randn(size, size, device=device, dtype=mm_dtype)
    b = torch.randn(size, size, device=device, dtype=mm_dtype)
    previous = torch.backends.cuda.matmul.allow_tf32
    try:
        torch.backends.cuda.matmul.allow_tf32 = False  # an fp32-accurate ceiling for fp32 operators
        mm_ms = time_cuda(torch.mm, [[a, b]], trials=30, warmup=3, flush=False).median_ms
        if mm_dtype == torch.float32:
            torch.backends.cuda.matmul.allow_tf32 = True
            tf32_ms = time_cuda(torch.mm, [[a, b]], trials=30, warmup=3, flush=False).median_ms
            mm_ms = min(mm_ms, 3 * tf32_ms)  # 3xTF32
    finally:
        torch.backends.cuda.matmul.allow_tf32 = previous
    tflops = 2 * size**3 / (mm_ms * 1e-3) / 1e12
    return bandwidth, tflops


def roofline(bytes_moved: int, flops: int, measured_ms: float, device_index: int, dtype: torch.dtype) -> Roofline:
    bandwidth, tflops = ceilings(device_index, dtype)
    memory_ms = bytes_moved / (bandwidth * 1e9) * 1e3
    compute_ms = flops / (tflops * 1e12) * 1e3
    floor = max(memory_ms, compute_ms)
    if floor < LATENCY_FLOOR_MS:
        bound = "latency"
    else:
        bound = "memory" if memory_ms >= compute_ms else "compute"
    return Roofline(
        bytes_moved=bytes_moved,
        flops=flops,
        floor_ms=floor,
        pct_of_floor=100.0 * floor / measured_ms if measured_ms > 0 else 0.0,
        bound=bound,
        bandwidth_gbs=bandwidth,
        peak_tflops=tflops,
    )
