"""Fixtures of the evaluate tests. Tests that install the interpreter's libdevice (interp_libdevice.install, also
through interp_autotune.install) replace libdevice's functions for the rest of their process, as the worker does
in its own; the static guard runs in the parent, where they are Triton's own: `libdevice_as_shipped` puts those
back for a module's tests (an xdist worker may have run an installing test first)."""

from __future__ import annotations

import pytest
from triton.language.extra import libdevice as _stub
from triton.language.extra.cuda import libdevice as _cuda
from triton.runtime import interpreter as _interpreter

SHIPPED = {module: dict(vars(module)) for module in (_stub, _cuda)}  # before any test installs the patch
# the interpreter's functions interp_autotune.remember_builtins replaces, as Triton ships them
INTERPRETER_SHIPPED = {name: vars(_interpreter)[name] for name in ("_patch_builtin", "_get_np_dtype", "_interpreter")}
LAUNCH_SHIPPED = vars(_interpreter.GridExecutor)["__call__"]  # interp_autotune.bound_memory wraps it


@pytest.fixture(scope="module")
def libdevice_as_shipped():
    current = {module: dict(vars(module)) for module in SHIPPED}
    for module, members in SHIPPED.items():
        for name, value in members.items():
            if not name.startswith("__"):
                setattr(module, name, value)
    yield
    for module, members in current.items():
        for name, value in members.items():
            if not name.startswith("__"):
                setattr(module, name, value)


@pytest.fixture(autouse=True)
def interpreter_as_shipped():
    """The interpreter's dot and program order as Triton ships them after each test: interp_autotune.install (TF32
    dots, programs in a random order) patches them for the rest of a process, as the worker wants in its own; and
    its builtin binding, dtype table and bounded memory before each test."""
    builder = _interpreter.InterpreterBuilder
    names = ("create_dot", "set_grid_dim", "set_grid_idx")
    saved = {name: vars(builder)[name] for name in names if name in vars(builder)}
    current = {name: vars(_interpreter)[name] for name in INTERPRETER_SHIPPED}
    launch = vars(_interpreter.GridExecutor)["__call__"]
    for name, value in INTERPRETER_SHIPPED.items():
        setattr(_interpreter, name, value)
    _interpreter.GridExecutor.__call__ = LAUNCH_SHIPPED
    yield
    _interpreter.GridExecutor.__call__ = launch
    for name, value in saved.items():
        setattr(builder, name, value)
    for name, value in current.items():
        setattr(_interpreter, name, value)
