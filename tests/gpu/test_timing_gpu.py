"""The timer's two passes on a GPU (evaluate/timing.py): the host's time to enqueue a call shows in the
plain pass whenever it exceeds the flush ahead of the call, and stays out of the masked pass. Skipped
without CUDA."""

from __future__ import annotations

import time

import pytest
import torch
from foundry.evaluate.timing import time_cuda

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA"),
]


def test_the_hosts_enqueue_time_stays_out_of_the_masked_time():
    x = torch.ones(1 << 20, device="cuda")

    def slow_to_launch(a: torch.Tensor) -> torch.Tensor:
        until = time.perf_counter() + 0.0005  # half a millisecond of host work before each launch
        while time.perf_counter() < until:
            pass
        return a * 2

    result = time_cuda(slow_to_launch, [[x]], trials=50, warmup=5)
    assert result.host_ms is not None and result.host_ms >= 0.5
    assert result.mask_ms is not None and result.mask_ms >= 4 * 0.5
    assert result.plain_median_ms is not None and result.plain_median_ms > 0.3  # waited for the host
    assert result.median_ms < 0.1  # a 4 MB multiply alone
    assert not result.escaped
