"""The plain-Python broadcast helper emitted into candidates agrees with torch.broadcast_shapes, refuses
what torch refuses, and is what launchers of several operands call."""

from __future__ import annotations

import itertools

import pytest
import torch
from foundry.codegen.kernels import BROADCAST_HELPER, broadcast_line


def helper():
    namespace: dict = {"torch": torch}
    exec(compile(BROADCAST_HELPER, "<broadcast helper>", "exec"), namespace)
    return namespace["broadcast_shape"]


SIZES = [(), (1,), (2,), (3,), (4, 1), (1, 3), (4, 3), (2, 1, 1), (2, 4, 3), (5, 1, 4, 1), (1, 2, 1, 3)]


@pytest.mark.parametrize("count", [1, 2, 3])
def test_agrees_with_torch_on_every_combination(count):
    broadcast_shape = helper()
    checked = refused = 0
    for shapes in itertools.product(SIZES, repeat=count):
        sizes = [torch.Size(s) for s in shapes]
        try:
            expected = torch.broadcast_shapes(*sizes)
        except RuntimeError:
            with pytest.raises(ValueError, match="do not broadcast"):
                broadcast_shape(*sizes)
            refused += 1
            continue
        got = broadcast_shape(*sizes)
        assert isinstance(got, torch.Size) and got == expected, shapes
        checked += 1
    assert checked > 0 and (count == 1 or refused > 0)


def test_launch_line_per_operand_count():
    assert broadcast_line([]) == "shape = ()"
    assert broadcast_line(["x"]) == "shape = x.shape"
    assert broadcast_line(["x", "b"]) == "shape = broadcast_shape(x.shape, b.shape)"
