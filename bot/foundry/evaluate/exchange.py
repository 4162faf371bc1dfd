"""Trial inputs and outputs that stay on the device: on a GPU machine the evaluator shares them with a
candidate's worker through CUDA IPC instead of through files on the host. Imported by the worker before any
candidate code runs; imports only ctypes and torch.

Why: a file round trip costs a softmax candidate (8192 x 16384 fp32) 6 GB through host memory, and fresh
host memory is what is slow. Measured on the H200 (torch 2.11): copying 512 MB to a new host tensor takes
0.48 s (0.044 s into memory already touched), writing 2 GB of trial inputs with torch.save 1.24 s, and eight
candidates preparing at once in one process 14.6 s, where a device-to-device copy of the same takes
milliseconds.

Direction: the evaluator allocates and exports; the worker only opens. An importer cannot free what it opened
(closing unmaps it in the importer only), and the evaluator frees its buffers only once the worker has been
reaped (CUDA leaves freeing an allocation that another process still has open undefined). Each shared buffer
is an allocation of its own (cudaMalloc, not the caching allocator, whose segments hold other tensors, and a
handle opens the whole allocation it points into): the worker reaches this candidate's inputs and output
buffers, never the reference outputs it is judged against. Probed on the H200 (driver 580): a handle edited
to name an allocation that was never exported does not open; one edited to name another exported allocation
does, so a candidate can reach the buffers of the candidates beside it, as it can reach their job files.

Output buffers start poisoned (NaN for floating point, the reference's bitwise complement otherwise): a
worker that says it delivered outputs it never wrote is judged on values that cannot match. The plan of
calls (which trial each correctness call runs, in order) lives here, so that the evaluator's output buffers
and the worker's calls cannot drift apart."""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from typing import Any

import torch

HANDLE_BYTES = 64  # cudaIpcMemHandle_t
IPC_LAZY_ENABLE_PEER_ACCESS = 1
ERROR_MEMORY_ALLOCATION = 2  # cudaErrorMemoryAllocation
DTYPES = {
    str(d).removeprefix("torch."): d
    for d in (
        torch.float16,
        torch.bfloat16,
        torch.float32,
        torch.float64,
        torch.int8,
        torch.uint8,
        torch.int16,
        torch.int32,
        torch.int64,
        torch.bool,
        torch.complex64,
        torch.complex128,
    )
}


class ExchangeError(RuntimeError):
    """The CUDA runtime refused an exchange call (the evaluator then sends files instead)."""


def call_plan(default_trials: int, trials: int) -> list[tuple[str, int]]:
    """The worker's correctness calls in order, as (label, trial whose reference the outputs must match):
    the default-shape trials; new contents written into the buffers the last call used (a cache keyed on
    addresses returns stale results); the declared shape variants; trial 0 again, and at new addresses; last,
    new contents at new addresses after every other call."""
    plan = [("trial", i) for i in range(default_trials)]
    if default_trials > 1:
        plan.append(("rewrite", 0))
    plan += [("trial", i) for i in range(default_trials, trials)]
    plan += [("repeat", 0), ("moved", 0)]
    if default_trials > 1:
        plan.append(("fresh", 1))
    return plan


class _Handle(ctypes.Structure):
    _fields_ = [("reserved", ctypes.c_ubyte * HANDLE_BYTES)]


class _Device:
    """A span of device memory as __cuda_array_interface__ bytes, for torch.as_tensor."""

    def __init__(self, pointer: int, nbytes: int) -> None:
        self.__cuda_array_interface__ = {
            "shape": (nbytes,),
            "typestr": "|u1",
            "data": (pointer, False),
            "version": 2,
            "strides": None,
        }


class Runtime:
    """The few CUDA runtime calls torch does not expose, on the runtime library torch itself loaded."""

    def __init__(self) -> None:
        torch.cuda.init()
        path = loaded_library("libcudart.so") or ctypes.util.find_library("cudart")
        if path is None:
            raise ExchangeError("no CUDA runtime library found in this process")
        lib = ctypes.CDLL(path)
        lib.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
        lib.cudaFree.argtypes = [ctypes.c_void_p]
        lib.cudaIpcGetMemHandle.argtypes = [ctypes.POINTER(_Handle), ctypes.c_void_p]
        lib.cudaIpcOpenMemHandle.argtypes = [ctypes.POINTER(ctypes.c_void_p), _Handle, ctypes.c_uint]
        lib.cudaGetLastError.argtypes = []
        for name in ("cudaMalloc", "cudaFree", "cudaIpcGetMemHandle", "cudaIpcOpenMemHandle", "cudaGetLastError"):
            getattr(lib, name).restype = ctypes.c_int
        self.lib = lib
        self.path = path

    def check(self, err: int, what: str) -> None:
        if err:
            self.lib.cudaGetLastError()  # clear it, so that torch's next call does not report it
            if err == ERROR_MEMORY_ALLOCATION:
                raise torch.cuda.OutOfMemoryError(f"{what}: out of device memory")
            raise ExchangeError(f"{what} failed with CUDA error {err}")

    def malloc(self, nbytes: int) -> int:
        pointer = ctypes.c_void_p()
        err = self.lib.cudaMalloc(ctypes.byref(pointer), max(nbytes, 1))
        if err == ERROR_MEMORY_ALLOCATION:  # blocks torch caches but does not use
            self.lib.cudaGetLastError()
            torch.cuda.empty_cache()
            err = self.lib.cudaMalloc(ctypes.byref(pointer), max(nbytes, 1))
        self.check(err, f"cudaMalloc of {nbytes} bytes")
        assert pointer.value is not None
        return pointer.value

    def free(self, pointer: int) -> None:
        self.check(self.lib.cudaFree(ctypes.c_void_p(pointer)), "cudaFree")

    def export(self, pointer: int) -> str:
        handle = _Handle()
        self.check(self.lib.cudaIpcGetMemHandle(ctypes.byref(handle), ctypes.c_void_p(pointer)), "cudaIpcGetMemHandle")
        return bytes(handle.reserved).hex()

    def open(self, handle: str) -> int:
        raw = bytes.fromhex(handle)
        if len(raw) != HANDLE_BYTES:
            raise ExchangeError(f"an IPC handle has {HANDLE_BYTES} bytes, not {len(raw)}")
        pointer = ctypes.c_void_p()
        err = self.lib.cudaIpcOpenMemHandle(
            ctypes.byref(pointer), _Handle.from_buffer_copy(raw), IPC_LAZY_ENABLE_PEER_ACCESS
        )
        self.check(err, "cudaIpcOpenMemHandle")
        assert pointer.value is not None
        return pointer.value


def loaded_library(prefix: str) -> str | None:
    """The path of a shared library this process has mapped whose file name starts with prefix."""
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                fields = line.split(maxsplit=5)
                if len(fields) == 6 and fields[5].startswith("/"):
                    path = fields[5].rstrip("\n")
                    if path.rsplit("/", 1)[-1].startswith(prefix):
                        return path
    except OSError:
        return None
    return None


@functools.cache
def runtime() -> Runtime:
    return Runtime()


def span(shape: list[int], stride: list[int]) -> int:
    """Elements a tensor of this shape and stride reaches from its first one (0 when it has none)."""
    if any(n == 0 for n in shape):
        return 0
    return 1 + sum((n - 1) * s for n, s in zip(shape, stride, strict=True))


def wrap(pointer: int, dtype: torch.dtype, shape: list[int], stride: list[int], device_index: int) -> torch.Tensor:
    """A tensor over device memory torch did not allocate (it does not free it)."""
    size = torch.empty((), dtype=dtype).element_size()
    nbytes = span(shape, stride) * size
    raw = torch.as_tensor(_Device(pointer, max(nbytes, size)), device=torch.device("cuda", device_index))
    return raw[: max(nbytes, size)].view(dtype).as_strided(shape, stride)


def descriptor(handle: str, like: torch.Tensor) -> dict[str, Any]:
    return {
        "handle": handle,
        "dtype": str(like.dtype).removeprefix("torch."),
        "shape": list(like.shape),
        "stride": list(like.stride()),
    }


def poison_(t: torch.Tensor, reference: torch.Tensor) -> torch.Tensor:
    """Fill t with values no correct output has: NaN where the type has it, else the reference's complement
    (a boolean output's negation)."""
    if t.is_floating_point() or t.is_complex():
        return t.fill_(float("nan"))
    if t.dtype is torch.bool:
        return torch.logical_not(reference, out=t)
    return torch.bitwise_not(reference, out=t)


def shareable(x: Any) -> bool:
    """A tensor the evaluator shares with the worker rather than sending in the job file: non-empty, and no
    element reached twice (a broadcast input, stride 0, goes through the file, which keeps its storage)."""
    if not isinstance(x, torch.Tensor) or x.numel() == 0 or x.dtype not in DTYPES.values():
        return False
    extent = 1  # elements the smaller strides reach
    for stride, n in sorted((s, n) for n, s in zip(x.shape, x.stride(), strict=True) if n > 1):
        if stride < extent:
            return False
        extent += (n - 1) * stride
    return True


class Shared:
    """One candidate's device buffers on the evaluator's side: trial inputs and poisoned output buffers, each
    an exported allocation of its own. close() frees them: only once the worker has been reaped."""

    def __init__(self, device_index: int) -> None:
        self.device_index = device_index
        self.pointers: list[int] = []
        self.nbytes = 0

    def allocate(self, like: torch.Tensor, stride: list[int] | None = None) -> tuple[torch.Tensor, dict[str, Any]]:
        """A buffer shaped like `like` (contiguous, or with the given strides) and its descriptor."""
        rt = runtime()
        shape = list(like.shape)
        stride = stride if stride is not None else list(torch.empty(shape, device="meta").stride())
        with torch.cuda.device(self.device_index):
            nbytes = max(span(shape, stride), 1) * like.element_size()
            pointer = rt.malloc(nbytes)
            self.pointers.append(pointer)
            self.nbytes += nbytes
            view = wrap(pointer, like.dtype, shape, stride, self.device_index)
            return view, descriptor(rt.export(pointer), view)

    def put(self, x: torch.Tensor) -> dict[str, Any]:
        """x's values in a shared buffer with x's strides (a view's gaps kept, its storage offset not); its
        descriptor for the worker. Only for shareable(x)."""
        view, desc = self.allocate(x, list(x.stride()))
        view.copy_(x)
        return desc

    def outputs(self, reference: list[torch.Tensor]) -> tuple[list[torch.Tensor], list[dict[str, Any]]]:
        """Poisoned buffers shaped like one call's reference outputs, and their descriptors; none at all where
        an output has a dtype the worker could not open (its outputs then go through the file)."""
        views, descs = [], []
        if not all(r.dtype in DTYPES.values() for r in reference):
            return views, descs
        for r in reference:
            view, desc = self.allocate(r)
            views.append(poison_(view, r))
            descs.append(desc)
        return views, descs

    def close(self) -> None:
        """Free every buffer. Only once the worker that opened them is gone. A buffer that fails to free does
        not keep the others: all are tried, then the first failure is raised."""
        if not self.pointers:
            return
        rt = runtime()
        failed: list[Exception] = []
        with torch.cuda.device(self.device_index):
            torch.cuda.synchronize()
            pointers, self.pointers = self.pointers, []
            for pointer in pointers:
                try:
                    rt.free(pointer)
                except Exception as exc:  # the rest are still freed
                    failed.append(exc)
        self.nbytes = 0
        if failed:
            raise failed[0]


def open_shared(desc: dict[str, Any], device_index: int = 0) -> torch.Tensor:
    """The worker's view of one of the evaluator's buffers (left open until the worker exits)."""
    dtype = DTYPES.get(str(desc.get("dtype")))
    shape, stride = desc.get("shape"), desc.get("stride")
    counts = (shape, stride)
    if (
        dtype is None
        or not all(isinstance(v, list) and all(isinstance(n, int) and n >= 0 for n in v) for v in counts)
        or len(shape) != len(stride)
    ):
        raise ExchangeError(f"not a buffer descriptor: {desc!r}"[:200])
    return wrap(runtime().open(str(desc["handle"])), dtype, shape, stride, device_index)


def deliver(out: Any, buffers: list[torch.Tensor] | None) -> bool:
    """Copy one call's outputs into the evaluator's buffers when they are plain tensors on the buffers' device
    with the reference's count, shapes and dtypes; False (and nothing copied) otherwise, and the worker sends
    them through its outputs file for the evaluator to diagnose."""
    tensors = list(out) if isinstance(out, (tuple, list)) else [out]
    if buffers is None or len(tensors) != len(buffers):
        return False
    for t, b in zip(tensors, buffers, strict=True):
        if type(t) is not torch.Tensor or t.device != b.device or t.shape != b.shape or t.dtype != b.dtype:
            return False
    for t, b in zip(tensors, buffers, strict=True):
        b.copy_(t.detach())
    if buffers and buffers[0].is_cuda:
        torch.cuda.synchronize()
    return True
