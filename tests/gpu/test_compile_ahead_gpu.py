"""Compiling ahead on CUDA: the worker's dry pass (meta tensors, launches turned into Triton's warmup)
compiles exactly the kernels the real calls then launch, so they compile nothing more. Skipped without CUDA."""

from __future__ import annotations

import sys
import types

import pytest
import torch
import triton
import triton.language as tl
from foundry.evaluate.runtime_guard import LaunchRecorder
from foundry.evaluate.worker import compile_ahead

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA"),
]


@triton.jit
def scale_rows(x_ptr, out_ptr, n_cols, scale, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    x = tl.load(x_ptr + row * n_cols + offs, mask=mask)
    tl.store(out_ptr + row * n_cols + offs, x * scale, mask=mask)


class ModelNew(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        out = torch.empty_like(x)
        scale_rows[(x.shape[0],)](x, out, x.shape[1], self.scale, BLOCK=triton.next_power_of_2(x.shape[1]))
        return out


def compiled_count() -> int:
    return len(scale_rows.device_caches[torch.cuda.current_device()][0])


@pytest.fixture
def recorder(monkeypatch):
    module = types.ModuleType("foundry_candidate")
    module.ModelNew = ModelNew
    monkeypatch.setitem(sys.modules, "foundry_candidate", module)
    rec = LaunchRecorder()
    rec.install()
    yield rec
    for cls, original in rec.installed:
        cls.run = original


def test_the_dry_pass_compiles_what_the_real_calls_launch(recorder):
    before = compiled_count()
    trials = [[torch.randn(64, 1000)], [torch.randn(33, 1000)], [torch.randn(16, 3000)]]
    assert compile_ahead(ModelNew, {"init": [2.0], "trials": trials}, recorder, torch) is None
    after_dry = compiled_count()
    assert after_dry - before == 2  # two column widths, two BLOCK sizes; the row count is not specialized
    assert recorder.total == 0
    model = ModelNew(2.0).cuda()
    for (x,) in trials:
        x = x.cuda()
        torch.testing.assert_close(model(x), x * 2.0)
    assert compiled_count() == after_dry  # the real launches found their kernels compiled
    assert recorder.total == 3
