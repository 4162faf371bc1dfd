"""Multi-config @triton.autotune under the interpreter (evaluate/interp_autotune.py): real kernels on tiny grids.
Without the patch Triton fails with "0 active drivers"; with it every config the search could pick is the one
whose output counts in turn, per tuning key, with the autotuner's own hooks."""

from __future__ import annotations

import pytest
import torch
import triton
import triton.language as tl
from foundry.evaluate import interp_autotune
from triton.runtime.autotuner import Autotuner

pytestmark = pytest.mark.interp
CONFIGS = [triton.Config({"BLOCK": 16}), triton.Config({"BLOCK": 32}, num_warps=8), triton.Config({"BLOCK": 64})]


@pytest.fixture
def patched():
    saved = {name: vars(Autotuner)[name] for name in ("run", "do_bench")}
    assert interp_autotune.install()
    yield
    for name, value in saved.items():
        setattr(Autotuner, name, value)


def make_kernel(wrong_block: int | None = None, **tune: object):
    @triton.autotune(configs=CONFIGS, key=["n"], **tune)
    @triton.jit
    def _double_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr, WRONG: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        value = tl.load(x_ptr + offs, mask=offs < n) * 2
        if BLOCK == WRONG:
            value = value + 1
        tl.store(y_ptr + offs, value, mask=offs < n)

    def launch(x: torch.Tensor) -> tuple[torch.Tensor, int]:
        y = torch.empty_like(x)
        n = x.numel()
        _double_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, n, WRONG=wrong_block or 0)
        return y, _double_kernel.best_config.kwargs["BLOCK"]

    return _double_kernel, launch


def test_without_the_patch_a_multi_config_kernel_fails_under_the_interpreter():
    _, launch = make_kernel()
    with pytest.raises(RuntimeError, match="active drivers"):
        launch(torch.randn(40))


def test_each_config_is_used_in_turn_and_its_output_is_the_one_returned(patched):
    _, launch = make_kernel()
    x = torch.randn(40)
    blocks = []
    for _ in range(4):
        y, block = launch(x)
        assert torch.equal(y, x * 2)
        blocks.append(block)
    assert blocks == [16, 32, 64, 16]


def test_a_kernel_wrong_for_one_config_is_wrong_on_that_configs_turn(patched):
    _, launch = make_kernel(wrong_block=32)
    x = torch.randn(40)
    right = [torch.equal(launch(x)[0], x * 2) for _ in range(3)]
    assert right == [True, False, True]


def test_tuning_keys_take_their_turns_independently(patched):
    _, launch = make_kernel()
    a, b = torch.randn(40), torch.randn(30)  # key n: two tuning keys, called alternately
    blocks = [launch(x)[1] for x in (a, b, a, b, a, b)]
    assert blocks == [16, 16, 32, 32, 64, 64]


def test_the_first_call_runs_every_config_with_the_autotuners_hooks(patched):
    seen: list[int] = []

    def pre_hook(args: dict, reset_only: bool = False) -> None:
        if not reset_only:
            seen.append(args["BLOCK"])

    _, launch = make_kernel(pre_hook=pre_hook)
    x = torch.randn(40)
    launch(x)
    assert seen == [16, 32, 64]  # tuning: each config once (the cached calls after it run no tuner hook)
    launch(x)
    assert seen == [16, 32, 64]


def test_early_config_prune_limits_the_turns_to_the_pruned_configs(patched):
    def keep_large(configs, named_args, **kwargs):
        return [c for c in configs if c.kwargs["BLOCK"] >= 32]

    _, launch = make_kernel(prune_configs_by={"early_config_prune": keep_large})
    x = torch.randn(40)
    assert [launch(x)[1] for _ in range(3)] == [32, 64, 32]


def test_heuristics_run_under_the_interpreter_unpatched():
    @triton.heuristics({"BLOCK": lambda args: triton.next_power_of_2(args["n"])})
    @triton.jit
    def _heuristic_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)

    x = torch.randn(37)
    y = torch.empty_like(x)
    _heuristic_kernel[(1,)](x, y, x.numel())
    assert torch.equal(y, x + 1)


def test_nothing_is_patched_off_the_interpreter(monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "0")
    run = vars(Autotuner)["run"]
    assert interp_autotune.install() is False
    assert vars(Autotuner)["run"] is run


@triton.jit
def _row_norm_helper(x):
    return tl.sqrt(tl.sum(x * x, axis=0))


@triton.jit
def _row_norm_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n + offs, mask=offs < n, other=0.0)
    tl.store(y_ptr + row, _row_norm_helper(x))


def test_the_remembered_builtins_run_kernels_as_triton_does_and_are_unbound_after_each_launch():
    """interp_autotune.remember_builtins: a launch whose helper (a @triton.jit call, tl.sum's combine function) binds
    the language again gives the same values with the remembered builtins, and after the launch triton.language's own
    builtins are back in place, as Triton leaves them."""
    from triton.language.core import is_builtin
    from triton.runtime import interpreter

    x = torch.randn(5, 24)

    def norms() -> torch.Tensor:
        y = torch.empty(5)
        _row_norm_kernel[(5,)](x, y, 24, BLOCK=32)
        return y

    saved = {name: vars(interpreter)[name] for name in ("_patch_builtin", "_get_np_dtype")}
    try:
        shipped = norms()
        assert interp_autotune.remember_builtins()
        assert interpreter._patch_builtin is not saved["_patch_builtin"]
        assert interpreter._get_np_dtype is not saved["_get_np_dtype"]
        remembered = norms()
        assert interp_autotune.BUILTINS, "the language modules' builtins were found and kept"
        assert torch.equal(remembered, shipped)
        torch.testing.assert_close(remembered, x.norm(dim=1))
        assert is_builtin(tl.load) and is_builtin(tl.tensor.__add__)
        assert interp_autotune.remember_builtins()  # once only
    finally:
        for name, value in saved.items():
            setattr(interpreter, name, value)


@triton.jit
def _shift_copy_kernel(x_ptr, y_ptr, n, shift, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs + shift, mask=offs < n, other=0.0), mask=offs < n)


def test_a_kernel_is_held_inside_the_tensors_it_was_launched_with():
    """interp_autotune.bound_memory: a load past the end of its tensor's storage (into the allocator's spare bytes)
    raises OutOfBounds; masked-off lanes are no access, and a view may read anywhere in its own storage."""
    from triton.runtime import interpreter

    saved = {"_interpreter": vars(interpreter)["_interpreter"], "__call__": vars(interpreter.GridExecutor)["__call__"]}
    try:
        assert interp_autotune.bound_memory()
        base = torch.arange(32, dtype=torch.float32)
        x, y = base[8:16], torch.empty(8)
        _shift_copy_kernel[(1,)](x, y, 8, -8, BLOCK=16)  # the view's storage starts 8 floats earlier: in bounds
        assert torch.equal(y, base[:8])
        alone = torch.arange(8, dtype=torch.float32)
        _shift_copy_kernel[(1,)](alone, y, 8, 0, BLOCK=16)  # lanes 8..15 masked off
        assert torch.equal(y, alone)
        with pytest.raises(Exception, match="OutOfBounds") as raised:
            _shift_copy_kernel[(1,)](alone, y, 8, 2, BLOCK=16)  # the last two lanes read past alone's 32 bytes
        assert "outside every tensor it was launched with" in str(raised.value)
        assert interp_autotune.bound_memory()  # once only
        assert not interp_autotune.SPANS, "no launch left on the stack"
    finally:
        interpreter._interpreter = saved["_interpreter"]
        interpreter.GridExecutor.__call__ = saved["__call__"]
