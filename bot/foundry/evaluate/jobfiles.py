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
import os
import secrets
import stat
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


MAX_TEXT_BYTES = 16 * 2**20  # a job's text file (source, settings, signatures) larger than this is not one
MAX_OUTPUT_BYTES = 64 * 2**30  # a worker's outputs file: above any output a trial of an H100/H200 holds


class UntrustedFile(Exception):
    """A file of a job directory that the evaluator refuses to read: a link, not a regular file, too large."""


def open_untrusted(path: Path, limit: int) -> int:
    """A file descriptor of `path`, read-only, never through a link (O_NOFOLLOW on the last component; the job
    directory itself is the evaluator's), of a regular file of at most `limit` bytes. After a candidate ran,
    everything in its job directory is the candidate's: a link there could point at any file of the user's."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError as exc:  # ELOOP: a link; ENOENT: not there
        raise UntrustedFile(f"{path.name}: {exc.strerror}") from exc
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UntrustedFile(f"{path.name} is not a regular file")
        if st.st_size > limit:
            raise UntrustedFile(f"{path.name} holds {st.st_size} bytes, more than {limit}")
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_untrusted(path: Path, limit: int = MAX_TEXT_BYTES) -> bytes:
    """The bytes of a regular file of a job directory (open_untrusted), never more than `limit`."""
    fd = open_untrusted(path, limit)
    with os.fdopen(fd, "rb") as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise UntrustedFile(f"{path.name} grew past {limit} bytes while read")
    return data


def load_untrusted(
    path: Path, device: str = "cpu", *, mapped: bool | None = None, limit: int = MAX_OUTPUT_BYTES
) -> Any:
    """load() of a file the candidate's process could have written: opened by open_untrusted (no link, a regular
    file, bounded size) and read weights_only (a pickle that names any callable outside torch's allowlist is
    refused, never run). A mapped load maps the opened file (through /proc/self/fd), not the path again."""
    if mapped is None:
        mapped = device.startswith("cuda")
    fd = open_untrusted(path, limit)
    try:
        if mapped:
            return torch.load(f"/proc/self/fd/{fd}", weights_only=True, mmap=True, map_location=device)
        with os.fdopen(os.dup(fd), "rb") as f:
            return torch.load(f, weights_only=True, map_location=device)
    finally:
        os.close(fd)


def write_new(directory: Path, name: str, data: bytes) -> None:
    """Creates directory/name with data: O_EXCL|O_NOFOLLOW, so never through a link nor over a file that is
    already there (the evaluator writes only into directories it just made)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(directory / name, flags, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


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
    try:
        blobs = [read_untrusted(jobdir / name) for name in names]
    except UntrustedFile as exc:
        raise JobChanged(f"{exc} in {jobdir.name}") from exc
    if expected and digest(*blobs) != expected:
        raise JobChanged(f"{', '.join(names)} in {jobdir.name} changed after the evaluator wrote them")
    return blobs


TRIALS = "trials.pt"  # the trial inputs: written only once the candidate is built (write_trials)
SCALARS = (int, bool, type(None), str)  # non-tensor inputs a shape description keeps as they are


def module_name() -> str:
    """A fresh, unpredictable name for a candidate's module: its code cannot tell a check from use by it."""
    return "m" + secrets.token_hex(6)


def load_candidate(source: str, path: str, name: str | None = None) -> types.ModuleType:
    """The candidate's module from its checked source (not from the file again): its lines are seeded into
    linecache, where Triton's @jit and tracebacks read a function's source, with no mtime so that no later
    check goes back to the file. name: the module's name (default: module_name(), different every load)."""
    name = name or module_name()
    linecache.cache[path] = (len(source), None, source.splitlines(True), path)
    module = types.ModuleType(name)
    module.__file__ = path
    sys.modules[name] = module
    exec(compile(source, path, "exec"), module.__dict__)  # noqa: S102 - the untrusted code, in its child
    return module


def describe_inputs(inputs: list[Any]) -> list[dict[str, Any]]:
    """A trial's inputs as the worker may know them before the call (job.json): each tensor's shape, strides
    and dtype, each int, bool, None or string as it is, anything else as unknown. No tensor's values."""
    described: list[dict[str, Any]] = []
    for x in inputs:
        if isinstance(x, torch.Tensor):
            dtype = str(x.dtype).removeprefix("torch.")
            described.append({"shape": list(x.shape), "stride": list(x.stride()), "dtype": dtype})
        elif isinstance(x, SCALARS):
            described.append({"value": x})
        else:
            described.append({"unknown": type(x).__name__})
    return described


def meta_inputs(described: list[dict[str, Any]]) -> list[Any] | None:
    """Meta tensors (shapes, strides and dtypes only) and plain values from describe_inputs; None where an
    input's kind is unknown."""
    inputs: list[Any] = []
    for d in described:
        if "shape" in d:
            dtype = getattr(torch, str(d["dtype"]), None)
            if not isinstance(dtype, torch.dtype):
                return None
            inputs.append(torch.empty_strided(d["shape"], d["stride"], dtype=dtype, device="meta"))
        elif "value" in d:
            inputs.append(d["value"])
        else:
            return None
    return inputs


def write_trials(obj: Any, jobdir: Path) -> None:
    """The trials file, written under a fresh name (O_EXCL: never through a link the candidate left there)
    and renamed over whatever has the file's name (a rename replaces a link, it does not follow it)."""
    fresh = jobdir / f".{TRIALS}.{secrets.token_hex(8)}"
    with open(fresh, "xb") as f:
        torch.save(obj, f)
    os.replace(fresh, jobdir / TRIALS)


def take_trials(jobdir: Path, mapped: bool = False) -> Any:
    """The worker's trials file, read and removed: no later candidate code finds it on disk."""
    path = jobdir / TRIALS
    try:
        return load(path, mapped=mapped)
    finally:
        path.unlink(missing_ok=True)
