"""The files that carry a job between the evaluator and its worker (inputs, state, outputs): hundreds of
MB to GB per candidate at full GPU sizes, so writing and reading them must cost little. Imports only
torch (the worker uses it before any candidate code runs).

Writes skip the zip CRC (torch's default computes one, which made writing ~5x slower, measured on a 1 GB
job); reads that go to a GPU map the file instead of copying it (the file sits in /dev/shm, so a mapped
load is a view of memory that is already there) and copy once, onto the device. Reads that stay on the
CPU copy as before, so no tensor the evaluator judges can change under it through the file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

try:  # torch >= 2.5; older builds keep computing the CRC
    from torch.utils.serialization import config as _serialization_config

    _serialization_config.save.compute_crc32 = False
except (ImportError, AttributeError):  # pragma: no cover - depends on the torch build
    pass


def save(obj: Any, path: Path) -> None:
    torch.save(obj, path)


def load(path: Path, device: str = "cpu", *, mapped: bool | None = None) -> Any:
    """Tensors on `device`. mapped (default: when loading onto a GPU) maps the file instead of reading it;
    the worker maps its job file on a GPU machine too, since it copies every trial to the device."""
    if mapped is None:
        mapped = device.startswith("cuda")
    return torch.load(path, weights_only=True, mmap=mapped, map_location=device)
