"""The files that carry a job between the evaluator and its worker (inputs, state, outputs): hundreds of
MB to GB per candidate at full GPU sizes, so writing and reading them must cost little. Imports only
torch (the worker uses it before any candidate code runs).

Writes skip the zip CRC (torch's default computes one, which made writing ~5x slower, measured on a 1 GB
job); reads that go to a GPU map the file instead of copying it (the file sits in /dev/shm, so a mapped
load is a view of memory that is already there) and copy once, onto the device. Reads that stay on the
CPU copy as before, so no tensor the evaluator judges can change under it through the file.

The job's text files (the candidate's source, the job's settings) are checked against a digest the parent
hands the worker over its command line or pipe, then used from memory: another candidate, running as the same
user, could otherwise put its own code in this one's job directory before the worker reads it, and have it
verified under this candidate's name."""

from __future__ import annotations

import hashlib
import linecache
import sys
import types
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


def no_verdict(rule: str, message: str) -> dict[str, Any]:
    """A failure of the evaluation itself, as a child reports failures (worker.classify's fields): no verdict
    on the candidate's code."""
    return {"kind": "crash", "rule": rule, "message": message[:500], "line": None, "evidence": ""}


class JobChanged(Exception):
    """A job file is not what the parent wrote."""

    def error(self) -> dict[str, Any]:
        return no_verdict("job_changed", str(self))


def digest(*blobs: bytes) -> str:
    """SHA-256 over the blobs, each with its length (so that no two splits of the same bytes collide)."""
    h = hashlib.sha256()
    for blob in blobs:
        h.update(len(blob).to_bytes(8, "little"))
        h.update(blob)
    return h.hexdigest()


def read_checked(jobdir: Path, names: tuple[str, ...], expected: str) -> list[bytes]:
    """The files' bytes, read once; JobChanged unless they match `expected` (no check when it is empty)."""
    blobs = [(jobdir / name).read_bytes() for name in names]
    if expected and digest(*blobs) != expected:
        raise JobChanged(f"{', '.join(names)} in {jobdir.name} changed after the evaluator wrote them")
    return blobs


def load_candidate(source: str, path: str, name: str = "foundry_candidate") -> types.ModuleType:
    """The candidate's module from its checked source (not from the file again): its lines are seeded into
    linecache, where Triton's @jit and tracebacks read a function's source, with no mtime so that no later
    check goes back to the file."""
    linecache.cache[path] = (len(source), None, source.splitlines(True), path)
    module = types.ModuleType(name)
    module.__file__ = path
    sys.modules[name] = module
    exec(compile(source, path, "exec"), module.__dict__)  # noqa: S102 - the untrusted code, in its child
    return module
