"""The static guard's kernel_allowlist (inside @triton.jit bodies only what Triton's language defines: the CPU check
runs kernels under the interpreter, the GPU runs them compiled, and Python that Triton's code generator decides
at trace time can differ between the two), device_dispatch (launcher code that tells the CPU check from a GPU
run), the unverified torch.func extension points of autograd.Function, and the libdevice functions the
interpreter cannot run (interp_libdevice)."""

from __future__ import annotations

import textwrap

import pytest
from foundry.evaluate.static_guard import StaticGuard
from foundry.rules.loader import load_rules

pytestmark = pytest.mark.usefixtures("libdevice_as_shipped")

HEADER = """
import math

import torch
import triton
import triton.language as tl
from torch import nn
from triton.language.extra import libdevice

SCALE = tl.constexpr(2.0)


@triton.jit
def _helper(v):
    return v * SCALE


@triton.jit
def kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
{body}
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        y = torch.empty_like(x)
{launcher}
        kernel[(triton.cdiv(x.numel(), 256),)](x, y, x.numel(), BLOCK=256)
        return y
"""


@pytest.fixture(scope="module")
def guard() -> StaticGuard:
    return StaticGuard(load_rules().guard)


def errors(guard: StaticGuard, body: str = "y = x", launcher: str = "pass", extra: str = "") -> list[tuple[str, str]]:
    source = HEADER.format(
        body=textwrap.indent(textwrap.dedent(body).strip(), "    "),
        launcher=textwrap.indent(textwrap.dedent(launcher).strip(), "        "),
    )
    found, warned = guard.check(source + textwrap.dedent(extra))
    # device_dispatch is a warning in rules/guard.yaml for now (see its comment): reported either way
    return [(d.rule or "", d.message) for d in found + warned]


HONEST_KERNEL_BODIES = [
    "y = x",
    "y = _helper(x) + SCALE",
    "y = tl.where(x > 0, x, 0.0) * tl.sigmoid(x)",
    "y = libdevice.erf(x * 0.7071) + libdevice.tanh(x) + libdevice.pow(x, 2.0)",
    "y = tl.extra.cuda.libdevice.exp(x)",
    "y = x.to(tl.float32) * x.dtype.primitive_bitwidth",
    "y = x * (1.0 if x.dtype == tl.float32 else 2.0)",
    "y = x + len(x.shape) + min(BLOCK, 4) + max(1, 2) + int(1.5) + float(2)",
    "acc = tl.zeros((BLOCK,), dtype=tl.float32)\nfor i in range(0, 4):\n    acc += x\ny = acc",
    "acc = x\nfor i in tl.static_range(2):\n    acc = acc * 2\ny = acc",
    "y = x * math.pi + math.log2(BLOCK)",
    "y = tl.reshape(x, (BLOCK,)).T if BLOCK > 0 else x",
    "y = x + tl.load(x_ptr + offs, mask=mask).to(x_ptr.dtype.element_ty)",
    "y = x * triton.cdiv(BLOCK, 2)",
    'tl.static_assert(BLOCK >= 16, "BLOCK too small")\ny = x',
    "y = x.sum(axis=0) + x",
]


@pytest.mark.parametrize("body", HONEST_KERNEL_BODIES)
def test_kernel_constructs_triton_defines_pass(guard: StaticGuard, body: str) -> None:
    assert errors(guard, body) == []


CHEATING_KERNEL_BODIES = {
    'if hasattr(x.handle, "data"):\n    y = x\nelse:\n    y = x * 0.0': "hasattr",
    "y = x if isinstance(BLOCK, tl.constexpr) else x * 0.0": "isinstance",
    "y = x if callable(x) else x * 0.0": "callable",
    "y = x * abs(BLOCK)": "'abs' is not a builtin",
    "h = x.handle\ny = x": "'handle'",
    "y = x + x.handle.data.size": "'handle'",
    "y = x if torch.cuda.is_available() else x * 0.0": "torch",
    "y = x * SCALE_PLAIN": "SCALE_PLAIN",
    "y = x * _plain_helper(2)": "_plain_helper",
    "y = libdevice.j0(x)": "no implementation under the Triton interpreter",
}


@pytest.mark.parametrize("body", sorted(CHEATING_KERNEL_BODIES))
def test_kernel_constructs_outside_triton_are_refused(guard: StaticGuard, body: str) -> None:
    extra = "\nSCALE_PLAIN = 2.0\n\n\ndef _plain_helper(v):\n    return v\n"
    found = errors(guard, body, extra=extra)
    assert any(rule == "kernel_allowlist" and CHEATING_KERNEL_BODIES[body] in message for rule, message in found), found


def test_unimplemented_libdevice_import_is_refused(guard: StaticGuard) -> None:
    found = errors(guard, "y = erfinv(x)", extra="")
    source_found, _ = guard.check(
        HEADER.replace(
            "from triton.language.extra import libdevice", "from triton.language.extra.libdevice import erfinv"
        )
        .replace("{body}", "    y = erfinv(x)")
        .replace("{launcher}", "        pass")
    )
    assert any(d.rule == "kernel_allowlist" and "erfinv" in d.message for d in source_found), source_found
    assert found  # erfinv is not bound in the plain header


HONEST_LAUNCHERS = [
    "pass",
    # the SM count on a GPU, a constant elsewhere (redteam10_ok_persistent_sm_count)
    "if x.is_cuda:\n    programs = torch.cuda.get_device_properties(x.device).multi_processor_count\n"
    "else:\n    programs = 4",
    "programs = torch.cuda.get_device_properties(x.device).multi_processor_count if x.is_cuda else 4",
    "major = torch.cuda.get_device_capability(x.device)[0] if torch.cuda.is_available() else 8",
    # choosing an allocation's device
    'where = "cuda" if torch.cuda.is_available() else "cpu"',
    "z = torch.empty(4, device=x.device)\nw = x.type(torch.float32)",
    "key = (x.shape[0], x.device)",
    "assert x.device == y.device",
]


@pytest.mark.parametrize("launcher", HONEST_LAUNCHERS)
def test_device_properties_and_allocation_devices_pass(guard: StaticGuard, launcher: str) -> None:
    assert errors(guard, launcher=launcher) == []


DEVICE_TESTS = [
    "k = kernel if x.is_cuda else _helper",
    "if torch.cuda.is_available():\n    x = x * 2",
    "BLOCK = 1024 if torch.cuda.is_available() else 64",
    "BLOCK = 1024 if x.is_cuda else 64",
    'on_gpu = x.device.type == "cuda"',
    "dev = x.device\non_gpu = dev.type",
    'on_gpu = str(x.device).startswith("cu")',
    'on_gpu = "cuda" in str(x.device)',
    "on_gpu = x.device == torch.device(0)",
    "on_gpu = x.get_device() >= 0",
    "n = torch.cuda.device_count()",
    "name = x.type()",
    'name = f"{x.device}"',
    "if x.is_cuda:\n    programs = 132\nelse:\n    programs = 4",
    "if x.is_cuda:\n    programs = torch.cuda.get_device_properties(x.device).multi_processor_count\n"
    "    y = y * 2\nelse:\n    programs = 4",
]


@pytest.mark.parametrize("launcher", DEVICE_TESTS)
def test_device_tests_are_refused(guard: StaticGuard, launcher: str) -> None:
    found = errors(guard, launcher=launcher)
    assert any(rule == "device_dispatch" for rule, _ in found), found


def test_module_level_device_constexpr_is_refused(guard: StaticGuard) -> None:
    found = errors(guard, "y = x if ON_GPU else x * 0.0", extra="\nON_GPU = tl.constexpr(torch.cuda.is_available())\n")
    assert any(rule == "device_dispatch" for rule, _ in found), found


@pytest.mark.parametrize("member", ["vmap", "jvp", "generate_vmap_rule"])
def test_unchecked_function_extension_points_are_refused(guard: StaticGuard, member: str) -> None:
    definition = (
        "    generate_vmap_rule = True\n"
        if member == "generate_vmap_rule"
        else f"    @staticmethod\n    def {member}(*args):\n        return args\n"
    )
    extra = (
        "\nclass Fn(torch.autograd.Function):\n"
        "    @staticmethod\n    def forward(ctx, x):\n        return x\n\n"
        "    @staticmethod\n    def backward(ctx, g):\n        return g\n\n" + definition
    )
    found = errors(guard, extra=extra)
    assert any(rule == "forbidden_attribute" and "never run by the check" in message for rule, message in found), found
