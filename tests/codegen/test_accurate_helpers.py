"""The device helpers generated kernels call for expm1, log1p and tanh keep full relative precision near 0 (where
exp(x) - 1, log(1 + x) and 2 * sigmoid(2x) - 1 cancel to nothing) and match torch everywhere, under the interpreter."""

import sys
import textwrap

import pytest
import torch
from foundry.codegen.expr import JIT_HELPERS, jit_helpers

pytestmark = pytest.mark.interp


def test_helpers_are_rendered_once_with_what_they_call():
    assert [h.split("def ")[1].split("(")[0] for h in jit_helpers(["y = _tanh(x)", "z = _tanh(y)"])] == [
        "_expm1",
        "_tanh",
    ]
    assert jit_helpers(["y = tl.exp(x)"]) == []


def test_helpers_keep_relative_precision(tmp_path, monkeypatch):
    source = "import triton\nimport triton.language as tl\n\n\n" + "\n\n\n".join(JIT_HELPERS.values())
    source += textwrap.dedent(
        """


        @triton.jit
        def run(x_ptr, a_ptr, b_ptr, c_ptr, n, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            m = offs < n
            x = tl.load(x_ptr + offs, mask=m)
            tl.store(a_ptr + offs, _expm1(x), mask=m)
            tl.store(b_ptr + offs, _log1p(x), mask=m)
            tl.store(c_ptr + offs, _tanh(x), mask=m)
        """
    )
    (tmp_path / "helpers_mod.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib

    sys.modules.pop("helpers_mod", None)
    mod = importlib.import_module("helpers_mod")
    x = torch.tensor(
        [0.0, 1e-30, -1e-20, 1e-8, -3e-8, 1e-4, -0.3, 0.49, -0.51, 0.7, 3.0, -5.0, 20.0, -100.0, -0.99, -1.0]
        + [float("inf"), float("-inf"), float("nan")],
        device="cuda" if torch.cuda.is_available() else "cpu",
    )
    got = [torch.empty_like(x) for _ in range(3)]
    mod.run[(1,)](x, *got, x.numel(), BLOCK=32)
    for out, fn in zip(got, (torch.expm1, torch.log1p, torch.tanh), strict=True):
        want = fn(x.double()).cpu()
        out = out.cpu()
        close = (out.double() - want).abs() <= 2e-7 * want.abs()
        same = (out.double() == want) | (torch.isnan(out) & torch.isnan(want))
        assert bool((close | same).all()), (fn.__name__, x.cpu()[~(close | same)], out[~(close | same)])
