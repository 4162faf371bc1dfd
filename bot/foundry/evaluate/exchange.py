"""Trial inputs and outputs that stay on the device: on a GPU machine the evaluator shares them with a
candidate's worker as device allocations exported as file descriptors, instead of through files on the
host. Imported by the worker before any candidate code runs; imports only ctypes, os and torch.

Why: a file round trip costs a softmax candidate (8192 x 16384 fp32) 6 GB through host memory, and fresh
host memory is what is slow. Measured on the H200 (torch 2.11): copying 512 MB to a new host tensor takes
0.48 s (0.044 s into memory already touched), writing 2 GB of trial inputs with torch.save 1.24 s, and eight
candidates preparing at once in one process 14.6 s, where a device-to-device copy of the same takes
milliseconds.

Direction: the evaluator allocates and exports; the worker only maps. Each shared buffer is a physical
allocation of its own (cuMemCreate, not the caching allocator, whose segments hold other tensors), exported
as a file descriptor that is handed to this candidate's worker alone, over its private control socket
(isolation.Child.hand); the worker maps what it was handed, closes the descriptors before any candidate code
runs, and reaches this candidate's inputs and output buffers, never the reference outputs it is judged
against, nor the buffers of the candidates beside it: no descriptor names them in its process. (The legacy
CUDA IPC handles this replaced name allocations by a predictable id: probed on the H200, driver 580, a
handle edited to name another exported allocation opened it.) An importer cannot free what it mapped
(unmapping affects only the importer), and the evaluator frees its buffers only once the worker has been
reaped.

Output buffers start poisoned (NaN for floating point, the reference's bitwise complement otherwise): a
worker that says it delivered outputs it never wrote is judged on values that cannot match. The plan of
calls (which trial each correctness call runs, in order) lives here, so that the evaluator's output buffers
and the worker's calls cannot drift apart."""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
from typing import Any

import torch

# <cuda.h>: the virtual memory management API, allocations exported as file descriptors
CU_MEM_ALLOCATION_TYPE_PINNED = 1
CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR = 1
CU_MEM_LOCATION_TYPE_DEVICE = 1
CU_MEM_ACCESS_FLAGS_PROT_READWRITE = 3
CU_MEM_ALLOC_GRANULARITY_MINIMUM = 0
CUDA_ERROR_OUT_OF_MEMORY = 2
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


def call_plan(default_trials: int, trials: int, reweighted: bool = False) -> list[tuple[str, int]]:
    """The worker's correctness calls in order, as (label, trial whose reference the outputs must match):
    the default-shape trials; new contents written into the buffers the last call used (a cache keyed on
    addresses returns stale results); the declared shape variants and the transformed trials; trial 0 again,
    and at new addresses; new contents at new addresses after every other call; last, where `reweighted`, the
    last trial's inputs after the module's parameters were changed in place to the values that trial's
    reference ran with (a kernel that kept anything derived from the weights returns stale results), then trial
    0 after the parameters were replaced by new objects holding the values sent at first (as
    load_state_dict(assign=True), weight tying or a LoRA merge do: a kernel holding the old objects reads the
    changed values), 4-d and 5-d ones channels-last (worker.converted: a kernel reading a conv weight as
    contiguous is wrong on a module converted to channels-last)."""
    regular = trials - 1 if reweighted else trials
    plan = [("trial", i) for i in range(default_trials)]
    if default_trials > 1:
        plan.append(("rewrite", 0))
    plan += [("trial", i) for i in range(default_trials, regular)]
    plan += [("repeat", 0), ("moved", 0)]
    if default_trials > 1:
        plan.append(("fresh", 1))
    if reweighted:
        plan += [("reweighted", trials - 1), ("reassigned", 0)]
    return plan


# One call more than the plan, at a position the worker draws when it runs (the candidate cannot know it): trial
# 0's inputs at new addresses, with what the candidate allocates filled with finite values instead of NaN (as
# reused memory holds in use). A kernel that reads its own uninitialised buffers to tell a checked call (NaN
# there) from use is wrong on this call.
PLAIN = "plain"


def with_plain(plan: list[tuple[str, int]], at: int) -> list[tuple[str, int]]:
    """The plan with the plain call (PLAIN, trial 0) inserted before call `at` (0 <= at <= len(plan))."""
    return plan[:at] + [(PLAIN, 0)] + plan[at:]


def without_plain(reported: list[tuple[Any, Any]]) -> tuple[list[tuple[Any, Any]], int | None]:
    """The calls a worker reported, less the plain call, and the plain call's position: None unless there is
    exactly one, expecting trial 0."""
    at = [i for i, (label, _) in enumerate(reported) if label == PLAIN]
    rest = [r for r in reported if r[0] != PLAIN]
    if len(at) != 1 or reported[at[0]][1] != 0:
        return rest, None
    return rest, at[0]


def grad_enabled(call: int) -> bool:
    """Whether call `call` of the plan runs with autograd enabled: every other one, as modules are called in
    use (training and inference), so that a kernel cannot tell a checked call by its grad mode."""
    return call % 2 == 1


class _Location(ctypes.Structure):  # CUmemLocation
    _fields_ = [("type", ctypes.c_int), ("id", ctypes.c_int)]


class _AllocFlags(ctypes.Structure):
    _fields_ = [
        ("compressionType", ctypes.c_ubyte),
        ("gpuDirectRDMACapable", ctypes.c_ubyte),
        ("usage", ctypes.c_ushort),
        ("reserved", ctypes.c_ubyte * 4),
    ]


class _Prop(ctypes.Structure):  # CUmemAllocationProp
    _fields_ = [
        ("type", ctypes.c_int),
        ("requestedHandleTypes", ctypes.c_int),
        ("location", _Location),
        ("win32HandleMetaData", ctypes.c_void_p),
        ("allocFlags", _AllocFlags),
    ]


class _Access(ctypes.Structure):  # CUmemAccessDesc
    _fields_ = [("location", _Location), ("flags", ctypes.c_int)]


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


class Driver:
    """The CUDA driver's virtual memory calls, on the driver library torch itself loaded: physical allocations
    exported as file descriptors, mapped into this process's address space."""

    def __init__(self) -> None:
        torch.cuda.init()
        path = loaded_library("libcuda.so") or ctypes.util.find_library("cuda")
        if path is None:
            raise ExchangeError("no CUDA driver library found in this process")
        lib = ctypes.CDLL(path)
        u64, size, ptr = ctypes.c_uint64, ctypes.c_size_t, ctypes.c_void_p
        signatures = {
            "cuMemGetAllocationGranularity": [ctypes.POINTER(size), ctypes.POINTER(_Prop), ctypes.c_int],
            "cuMemCreate": [ctypes.POINTER(u64), size, ctypes.POINTER(_Prop), u64],
            "cuMemRelease": [u64],
            "cuMemAddressReserve": [ctypes.POINTER(u64), size, size, u64, u64],
            "cuMemAddressFree": [u64, size],
            "cuMemMap": [u64, size, size, u64, u64],
            "cuMemUnmap": [u64, size],
            "cuMemSetAccess": [u64, size, ctypes.POINTER(_Access), size],
            "cuMemExportToShareableHandle": [ptr, u64, ctypes.c_int, u64],
            "cuMemImportFromShareableHandle": [ctypes.POINTER(u64), ptr, ctypes.c_int],
            "cuGetErrorName": [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)],
            "cuDeviceGet": [ctypes.POINTER(ctypes.c_int), ctypes.c_int],
            "cuDevicePrimaryCtxRetain": [ctypes.POINTER(ptr), ctypes.c_int],
            "cuCtxSetCurrent": [ptr],
        }
        try:
            for name, argtypes in signatures.items():
                fn = getattr(lib, name)
                fn.argtypes, fn.restype = argtypes, ctypes.c_int
        except AttributeError as exc:  # a driver older than CUDA 10.2
            raise ExchangeError(f"the CUDA driver has no virtual memory management: {exc}") from exc
        self.lib = lib
        self.path = path
        self.contexts: dict[int, ctypes.c_void_p] = {}

    def current(self, device: int) -> None:
        """Make device's primary context (the one torch uses) current on this thread: a thread that has made
        no CUDA call has none, and the mapping calls need one."""
        if device not in self.contexts:
            dev, ctx = ctypes.c_int(), ctypes.c_void_p()
            self.check(self.lib.cuDeviceGet(ctypes.byref(dev), device), "cuDeviceGet")
            self.check(self.lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
            self.contexts[device] = ctx  # retained once per process, never released: torch holds it anyway
        self.check(self.lib.cuCtxSetCurrent(self.contexts[device]), "cuCtxSetCurrent")

    def check(self, err: int, what: str) -> None:
        if err == CUDA_ERROR_OUT_OF_MEMORY:
            raise torch.cuda.OutOfMemoryError(f"{what}: out of device memory")
        if err:
            name = ctypes.c_char_p()
            self.lib.cuGetErrorName(err, ctypes.byref(name))
            raise ExchangeError(f"{what} failed with CUDA error {err} ({(name.value or b'?').decode()})")

    @staticmethod
    def prop(device: int) -> _Prop:
        prop = _Prop()
        prop.type = CU_MEM_ALLOCATION_TYPE_PINNED
        prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
        prop.location = _Location(CU_MEM_LOCATION_TYPE_DEVICE, device)
        return prop

    def rounded(self, nbytes: int, device: int) -> int:
        """nbytes rounded up to the device's allocation granularity (2 MiB on the H200)."""
        granularity = ctypes.c_size_t()
        prop = self.prop(device)
        self.check(
            self.lib.cuMemGetAllocationGranularity(
                ctypes.byref(granularity), ctypes.byref(prop), CU_MEM_ALLOC_GRANULARITY_MINIMUM
            ),
            "cuMemGetAllocationGranularity",
        )
        g = max(granularity.value, 1)
        return -(-max(nbytes, 1) // g) * g

    def create(self, nbytes: int, device: int) -> int:
        """A physical allocation of nbytes (rounded) on device that can be exported as a file descriptor."""
        handle = ctypes.c_uint64()
        prop = self.prop(device)
        err = self.lib.cuMemCreate(ctypes.byref(handle), nbytes, ctypes.byref(prop), 0)
        if err == CUDA_ERROR_OUT_OF_MEMORY:  # blocks torch caches but does not use
            torch.cuda.empty_cache()
            err = self.lib.cuMemCreate(ctypes.byref(handle), nbytes, ctypes.byref(prop), 0)
        self.check(err, f"cuMemCreate of {nbytes} bytes")
        return handle.value

    def map(self, handle: int, nbytes: int, device: int) -> int:
        """Map the allocation read-write for device at a fresh address of this process; the address."""
        address = ctypes.c_uint64()
        self.check(self.lib.cuMemAddressReserve(ctypes.byref(address), nbytes, 0, 0, 0), "cuMemAddressReserve")
        try:
            self.check(self.lib.cuMemMap(address.value, nbytes, 0, handle, 0), "cuMemMap")
            access = _Access(_Location(CU_MEM_LOCATION_TYPE_DEVICE, device), CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
            err = self.lib.cuMemSetAccess(address.value, nbytes, ctypes.byref(access), 1)
            if err:
                self.lib.cuMemUnmap(address.value, nbytes)
                self.check(err, "cuMemSetAccess")
        except BaseException:
            self.lib.cuMemAddressFree(address.value, nbytes)
            raise
        return address.value

    def export(self, handle: int) -> int:
        """A new file descriptor naming the allocation: whoever holds it can map it, nobody else can."""
        fd = ctypes.c_int(-1)
        self.check(
            self.lib.cuMemExportToShareableHandle(
                ctypes.byref(fd), handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0
            ),
            "cuMemExportToShareableHandle",
        )
        return fd.value

    def import_fd(self, fd: int) -> int:
        handle = ctypes.c_uint64()
        self.check(
            self.lib.cuMemImportFromShareableHandle(
                ctypes.byref(handle), ctypes.c_void_p(fd), CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
            ),
            "cuMemImportFromShareableHandle",
        )
        return handle.value

    def unmap(self, address: int, nbytes: int) -> None:
        self.check(self.lib.cuMemUnmap(address, nbytes), "cuMemUnmap")
        self.check(self.lib.cuMemAddressFree(address, nbytes), "cuMemAddressFree")

    def release(self, handle: int) -> None:
        self.check(self.lib.cuMemRelease(handle), "cuMemRelease")


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
def driver() -> Driver:
    return Driver()


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


def descriptor(fd_index: int, nbytes: int, like: torch.Tensor) -> dict[str, Any]:
    """What the worker needs to map one buffer: which of the descriptors it was handed names the allocation,
    the allocation's size, and the tensor's dtype, shape and strides. No handle: a descriptor names nothing
    outside the worker's own file descriptors."""
    return {
        "fd": fd_index,
        "nbytes": nbytes,
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
    a physical allocation of its own, mapped here and exported as a file descriptor (`fds`, in descriptor
    order) that only this candidate's worker is handed (`handover()`); `close()` frees the buffers: only once
    the worker has been reaped."""

    def __init__(self, device_index: int) -> None:
        self.device_index = device_index
        self.buffers: list[tuple[int, int, int]] = []  # (address, bytes, allocation handle)
        self.fds: list[int] = []
        self.nbytes = 0

    def allocate(self, like: torch.Tensor, stride: list[int] | None = None) -> tuple[torch.Tensor, dict[str, Any]]:
        """A buffer shaped like `like` (contiguous, or with the given strides) and its descriptor."""
        cu = driver()
        shape = list(like.shape)
        stride = stride if stride is not None else list(torch.empty(shape, device="meta").stride())
        with torch.cuda.device(self.device_index):
            cu.current(self.device_index)
            nbytes = cu.rounded(max(span(shape, stride), 1) * like.element_size(), self.device_index)
            handle = cu.create(nbytes, self.device_index)
            try:
                address = cu.map(handle, nbytes, self.device_index)
            except BaseException:
                cu.release(handle)
                raise
            self.buffers.append((address, nbytes, handle))
            self.nbytes += nbytes
            self.fds.append(cu.export(handle))
            view = wrap(address, like.dtype, shape, stride, self.device_index)
            return view, descriptor(len(self.fds) - 1, nbytes, view)

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

    def handover(self) -> list[int]:
        """The exported descriptors, now the caller's to close (isolation.run_child closes them once the worker
        holds its copies)."""
        fds, self.fds = self.fds, []
        return fds

    def close(self) -> None:
        """Free every buffer. Only once the worker that mapped them is gone. A buffer that fails to free does
        not keep the others: all are tried, then the first failure is raised."""
        for fd in self.handover():
            os.close(fd)
        if not self.buffers:
            return
        cu = driver()
        failed: list[Exception] = []
        with torch.cuda.device(self.device_index):
            torch.cuda.synchronize()
            cu.current(self.device_index)
            buffers, self.buffers = self.buffers, []
            for address, nbytes, handle in buffers:
                try:
                    cu.unmap(address, nbytes)
                    cu.release(handle)
                except Exception as exc:  # the rest are still freed
                    failed.append(exc)
        self.nbytes = 0
        if failed:
            raise failed[0]


def open_shared(desc: dict[str, Any], fds: list[int], device_index: int = 0) -> torch.Tensor:
    """The worker's view of one of the evaluator's buffers, mapped from the file descriptor the descriptor
    names among those the worker was handed (left mapped until the worker exits)."""
    dtype = DTYPES.get(str(desc.get("dtype")))
    shape, stride, index, nbytes = desc.get("shape"), desc.get("stride"), desc.get("fd"), desc.get("nbytes")
    counts = (shape, stride)
    if (
        dtype is None
        or not all(isinstance(v, list) and all(isinstance(n, int) and n >= 0 for n in v) for v in counts)
        or len(shape) != len(stride)
        or not isinstance(index, int)
        or not 0 <= index < len(fds)
        or not isinstance(nbytes, int)
        or nbytes < max(span(shape, stride), 1) * torch.empty((), dtype=dtype).element_size()
    ):
        raise ExchangeError(f"not a buffer descriptor: {desc!r}"[:200])
    cu = driver()
    with torch.cuda.device(device_index):
        cu.current(device_index)
        handle = cu.import_fd(fds[index])
        try:
            address = cu.map(handle, nbytes, device_index)
        finally:
            cu.release(handle)  # the mapping keeps the allocation
    return wrap(address, dtype, shape, stride, device_index)


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
