"""The runtime guard on a GPU (evaluate/runtime_guard.py): the witness (torch's profiler with CUDA activity)
cross-checks the launch recorder's counts against the kernels the device ran and the op log against the ops the
call ran; work in Triton's launch hooks, which run inside JITFunction.run on the compiled path, is the
candidate's."""

from __future__ import annotations

import pytest
import torch
import triton
import triton.language as tl
from foundry.evaluate.runtime_guard import VIOLATION_REGISTERED, VIOLATION_TAMPER, LaunchRecorder, OpLog

pytestmark = pytest.mark.gpu


@triton.jit
def _double_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


@pytest.fixture
def recorder():
    # as in the worker, the device is opened before the guard is installed: torch registers its own triton::
    # sparse ops when CUDA initializes, which would otherwise read as a registration during the first call
    torch.cuda.init()
    rec = LaunchRecorder()
    rec.install()
    yield rec
    rec.uninstall()


def double(x: torch.Tensor) -> torch.Tensor:
    y = torch.empty_like(x)
    _double_kernel[(triton.cdiv(x.numel(), 256),)](x, y, x.numel(), BLOCK=256)
    return y


def test_an_honest_launch_is_backed_by_the_kernel_the_device_ran(recorder):
    x = torch.randn(1000, device="cuda")
    double(x)  # compiled before the checked call
    with OpLog(recorder) as log:
        y = double(x)
    torch.cuda.synchronize()
    assert torch.equal(y, x * 2)
    assert dict(log.ops) == {"aten.empty_like.default": 1}
    assert recorder.violations == []


def test_a_forged_launch_count_is_not_backed_by_device_kernels(recorder):
    x = torch.randn(1000, device="cuda")
    with OpLog(recorder):
        double(x)
        recorder.launches["_double_kernel"] += 2
    assert recorder.violations == [
        f"{VIOLATION_TAMPER}launches counted that no kernel run backs: _double_kernel 3 counted, 1 ran"
    ]


def test_library_work_with_python_dispatch_switched_off_is_witnessed(recorder):
    a = torch.randn(64, 64, device="cuda")
    with OpLog(recorder):
        with torch._C._DisableTorchDispatch():
            a @ a
        double(a)
    (violation,) = recorder.violations
    assert violation.startswith(f"{VIOLATION_TAMPER}ops ran that the op log did not see: aten::")


def test_torch_work_in_a_launch_hook_is_logged_and_the_hook_is_a_registration(recorder):
    import triton.knobs as knobs

    x = torch.randn(8, 32, device="cuda")
    out = torch.empty_like(x)

    def hook(*args, **kwargs):
        out.copy_(torch.softmax(x, dim=-1))

    knobs.runtime.launch_enter_hook.add(hook)
    try:
        with OpLog(recorder) as log:
            double(x)
    finally:
        knobs.runtime.launch_enter_hook.remove(hook)
    assert "aten._softmax.default" in log.ops
    assert f"{VIOLATION_REGISTERED}Triton hook(s) set: knobs.runtime.launch_enter_hook" in recorder.violations
