"""The runtime guard's facts (evaluate/runtime_guard.py) in this process, with real kernels under the
interpreter: ops by fully qualified name, only the interpreter's own argument copies exempt, and tampering or
registrations recorded when the op log closes."""

from __future__ import annotations

import itertools

import pytest
import torch
import triton
import triton.language as tl
from foundry.evaluate.runtime_guard import (
    VIOLATION_REGISTERED,
    VIOLATION_TAMPER,
    LaunchRecorder,
    OpLog,
    describe_violations,
    op_identity,
    rule_name,
)

pytestmark = pytest.mark.interp
NAMESPACES = (f"foundry_test_ns{i}" for i in itertools.count())


@triton.jit
def _double_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


@pytest.fixture
def recorder():
    rec = LaunchRecorder()
    rec.install()
    yield rec
    rec.uninstall()


def double(x: torch.Tensor) -> torch.Tensor:
    y = torch.empty_like(x)
    _double_kernel[(1,)](x, y, x.numel(), BLOCK=16)
    return y


def test_op_identity_is_the_qualified_name_and_only_aten_maps_to_a_rule():
    assert op_identity(torch.ops.aten.add.Tensor) == "aten.add.Tensor"
    assert rule_name("aten.add.Tensor") == "add"
    assert rule_name("aten.empty_like.default") == "empty_like"
    assert rule_name("aten._to_copy.default[dtype]") == "_to_copy[dtype]"
    assert rule_name("mylib.empty.default") is None
    assert rule_name("prims.empty.default") is None
    assert rule_name("unknown.something") is None


def test_a_custom_op_named_like_an_allowed_aten_op_is_not_that_op(recorder):
    namespace = next(NAMESPACES)
    lib = torch.library.Library(namespace, "DEF")
    lib.define("empty(Tensor x) -> Tensor")
    lib.impl("empty", lambda x: x @ x.T, "CompositeExplicitAutograd")
    x = torch.randn(4, 4)
    with OpLog(recorder) as log:
        getattr(torch.ops, namespace).empty(x)
        double(x)
    assert f"{namespace}.empty.default" in log.ops
    assert {rule_name(op) for op in log.ops} == {None, "empty_like"}  # the custom op maps to no allowed op
    del lib


def test_an_honest_launch_logs_only_the_candidates_own_allocation(recorder):
    x = torch.randn(10)
    with OpLog(recorder) as log:
        y = double(x)
    assert torch.equal(y, x * 2)
    assert dict(log.ops) == {"aten.empty_like.default": 1}  # the interpreter's argument copies are its own
    assert recorder.violations == [] and recorder.total == 1


def test_a_pre_run_hook_runs_as_the_candidates_code_and_is_a_registration(recorder):
    @triton.jit
    def _hooked_kernel(y_ptr, BLOCK: tl.constexpr):
        tl.load(y_ptr + tl.arange(0, BLOCK))

    x = torch.randn(4, 8)
    out = torch.empty_like(x)
    _hooked_kernel.add_pre_run_hook(lambda *args, **kwargs: out.copy_(torch.softmax(x, dim=-1)))
    with OpLog(recorder) as log:
        _hooked_kernel[(1,)](out, BLOCK=16)
    assert "aten._softmax.default" in log.ops  # ran inside the launch, logged all the same
    assert recorder.violations == [f"{VIOLATION_REGISTERED}a pre-run hook on kernel _hooked_kernel"]


def test_torch_work_in_the_kernel_body_under_the_interpreter_is_logged(recorder):
    box = {}

    def smuggle(value):  # called from the interpreted kernel body: plain Python there
        box["y"] = torch.softmax(box["x"], dim=-1)
        return value

    @triton.jit
    def _body_kernel(y_ptr, FN: tl.constexpr, BLOCK: tl.constexpr):
        FN(0)
        tl.load(y_ptr + tl.arange(0, BLOCK))

    box["x"] = torch.randn(2, 8)
    with OpLog(recorder) as log:
        _body_kernel[(1,)](box["x"], FN=smuggle, BLOCK=16)
    assert "aten._softmax.default" in log.ops


def test_a_tensor_subclass_or_an_object_offering_data_ptr_is_a_violation(recorder):
    class Sneaky(torch.Tensor):
        pass

    class Duck:
        def __init__(self, t: torch.Tensor) -> None:
            self.t = t

        def data_ptr(self) -> int:
            return self.t.data_ptr()

    x = torch.randn(10)
    sneaky = x.as_subclass(Sneaky)
    with OpLog(recorder):
        _double_kernel[(1,)](sneaky, torch.empty(10), 10, BLOCK=16)
    with OpLog(recorder), pytest.raises(Exception):  # noqa: B017 - the interpreter refuses it; noticed before
        _double_kernel[(1,)](Duck(x), torch.empty(10), 10, BLOCK=16)
    arguments = [v for v in recorder.violations if not v.startswith(VIOLATION_TAMPER)]  # (the subclass's methods
    assert [v.split(".")[-1] for v in arguments] == ["Sneaky", "Duck"]  # ran ops inside the copies: seen too)


def test_replacing_a_patched_run_method_is_tampering(recorder):
    from triton.runtime.interpreter import InterpretedFunction

    wrapper = InterpretedFunction.run
    InterpretedFunction.run = lambda *a, **k: None
    try:
        with OpLog(recorder):
            pass
    finally:
        InterpretedFunction.run = wrapper
    assert recorder.violations == [f"{VIOLATION_TAMPER}InterpretedFunction.run was replaced"]
    assert describe_violations(recorder.violations)[0] == "guard_tampered"


def test_switching_the_op_log_off_is_tampering(recorder):
    from torch.utils._python_dispatch import _pop_mode

    x = torch.randn(8)
    with OpLog(recorder) as log:
        _pop_mode()
        torch.softmax(x, dim=0)
    assert "aten._softmax.default" not in log.ops  # unseen by the log: the witness saw it, and the log is gone
    assert recorder.violations == [
        f"{VIOLATION_TAMPER}ops ran that the op log did not see: aten::_softmax×1",
        f"{VIOLATION_TAMPER}the op log is no longer the active dispatch mode",
    ]


def test_a_dispatch_mode_of_the_candidates_is_a_registration(recorder):
    from torch.utils._python_dispatch import TorchDispatchMode, _get_current_dispatch_mode_stack

    class Hidden(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    hidden = Hidden()
    with OpLog(recorder) as log:
        hidden.__enter__()  # left pushed above the log
        torch.randn(2)
    assert recorder.violations == [f"{VIOLATION_TAMPER}the op log is no longer the active dispatch mode"]
    assert _get_current_dispatch_mode_stack() == []  # the harness's stack is as before the call
    assert "aten.randn.default" in log.ops  # a mode above the log still passes the ops down to it


def test_a_triton_launch_hook_is_a_registration(recorder):
    import triton.knobs as knobs

    def hook(*args, **kwargs):
        return None

    knobs.runtime.launch_enter_hook.add(hook)
    try:
        with OpLog(recorder):
            pass
    finally:
        knobs.runtime.launch_enter_hook.remove(hook)
    assert recorder.violations == [f"{VIOLATION_REGISTERED}Triton hook(s) set: knobs.runtime.launch_enter_hook"]
    assert describe_violations(recorder.violations)[0] == "registration"


def test_a_python_kernel_for_an_allowed_aten_op_is_a_registration(recorder):
    lib = torch.library.Library("aten", "IMPL")
    lib.impl("empty_like", lambda x, **kwargs: torch.softmax(x, dim=-1), "CPU")
    x = torch.randn(3, 5)
    with OpLog(recorder) as log:
        y = torch.empty_like(x)
    del lib
    assert torch.allclose(y, torch.softmax(x, dim=-1))  # the work hid behind an allowed name
    assert dict(log.ops) == {"aten.empty_like.default": 1}
    assert recorder.violations == [f"{VIOLATION_REGISTERED}new kernel for aten::empty_like"]


def test_an_op_defined_after_install_is_a_registration(recorder):
    namespace = next(NAMESPACES)
    lib = torch.library.Library(namespace, "DEF")
    lib.define("noop(Tensor x) -> Tensor")
    with OpLog(recorder):
        pass
    del lib
    assert recorder.violations == [f"{VIOLATION_REGISTERED}new op {namespace}::noop"]


def test_describe_violations_names_the_worst_first():
    subclass = ["k: argument of type Sneaky"]
    assert describe_violations(subclass)[0] == "tensor_subclass_argument"
    assert describe_violations(subclass + [f"{VIOLATION_REGISTERED}x"])[0] == "registration"
    rule, message = describe_violations([f"{VIOLATION_REGISTERED}x", f"{VIOLATION_TAMPER}y"])
    assert rule == "guard_tampered" and message.endswith(": y")


def test_the_witness_sees_torch_work_with_python_dispatch_switched_off(recorder):
    x = torch.randn(4, 8)
    with OpLog(recorder) as log:
        with torch._C._DisableTorchDispatch():
            torch.softmax(x, dim=-1)
        double(x)
    assert dict(log.ops) == {"aten.empty_like.default": 1}
    assert recorder.violations == [f"{VIOLATION_TAMPER}ops ran that the op log did not see: aten::_softmax×1"]


def test_the_witness_sees_torch_work_in_another_thread(recorder):
    import threading

    x = torch.randn(4, 8)
    with OpLog(recorder):
        worker = threading.Thread(target=lambda: torch.softmax(x, dim=-1))
        worker.start()
        worker.join()
        double(x)
    assert recorder.violations == [f"{VIOLATION_TAMPER}ops ran that the op log did not see: aten::_softmax×1"]


def test_a_forged_launch_count_has_no_kernel_run_behind_it(recorder):
    x = torch.randn(10)
    with OpLog(recorder):
        double(x)
        recorder.launches["_double_kernel"] += 2
    assert recorder.violations == [f"{VIOLATION_TAMPER}launches counted that no kernel run backs: * 3 counted, 1 ran"]


def test_autotuned_and_heuristic_launches_are_witnessed_like_plain_ones(recorder):
    from foundry.evaluate import interp_autotune
    from triton.runtime.autotuner import Autotuner

    saved = {name: vars(Autotuner)[name] for name in ("run", "do_bench")}
    interp_autotune.install()
    try:

        @triton.autotune(configs=[triton.Config({"BLOCK": 16}), triton.Config({"BLOCK": 32})], key=["n"])
        @triton.heuristics({"SCALE": lambda args: 2})
        @triton.jit
        def _scaled_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr, SCALE: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * SCALE, mask=offs < n)

        x = torch.randn(40)
        for _ in range(2):
            y = torch.empty_like(x)
            with OpLog(recorder) as log:
                _scaled_kernel[lambda meta: (triton.cdiv(40, meta["BLOCK"]),)](x, y, 40)
            assert torch.equal(y, x * 2) and set(log.ops) == set()
    finally:
        for name, value in saved.items():
            setattr(Autotuner, name, value)
    assert recorder.violations == [] and recorder.total == 4  # tuning ran both configs, then one each call
