"""The timer's masked pass, its CPU-side part: how long the device is kept busy ahead of each trial. (The
passes themselves: tests/gpu/test_timing_gpu.py.)"""

from __future__ import annotations

import pytest
from foundry.evaluate import timing


def test_the_mask_covers_four_times_the_hosts_steady_enqueue_time_within_bounds():
    assert timing.mask_length([900.0, 0.2, 0.25, 0.3]) == pytest.approx(1.0)  # the compiling first call left out
    assert timing.mask_length([0.01, 0.01]) == timing.MASK_MIN_MS
    assert timing.mask_length([5.0, 50.0, 60.0]) == timing.MASK_MAX_MS
    assert timing.mask_length([0.3]) == pytest.approx(1.2)  # one call: it is all there is
    assert timing.mask_length([]) == timing.MASK_MIN_MS
    # counted at a clock above any GPU's, so that the spin lasts at least the mask at any real clock
    assert timing.SPIN_CYCLES_PER_MS >= 2_500_000
