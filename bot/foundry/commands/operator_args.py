"""The operator settings `optimize` and `check` take on the command line, as `.github/foundry.yml` gives them per
operator: the precision class, training, and input shapes and dtype standing in for the file's declarations."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from foundry.core.errors import FatalError

if TYPE_CHECKING:
    from foundry.spec.loader import LoadedOperator

PRECISIONS = ("fp32", "tf32", "fp16", "bf16")


def add_operator_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--precision", choices=PRECISIONS, default=None, help="tolerance class (default: the file's FOUNDRY_PRECISION)"
    )
    parser.add_argument(
        "--training",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="check gradients too: forward and backward kernels (default: the file's FOUNDRY_TRAINING)",
    )
    parser.add_argument(
        "--inputs",
        default=None,
        metavar="JSON",
        help="input shapes, one list per input, e.g. '[[4, 1024], [1024]]': random inputs instead of get_inputs() "
        "(default: get_inputs())",
    )
    parser.add_argument(
        "--dtype",
        default=None,
        help="dtype of the floating inputs: float32, float16, bfloat16, float64 (default: get_inputs()'s)",
    )


def shapes_from(text: str | None) -> tuple[tuple[int, ...], ...]:
    if text is None:
        return ()
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise FatalError(f"--inputs: not JSON ({exc.msg}): {text!r}") from exc
    ok = (
        isinstance(value, list)
        and value
        and all(isinstance(s, list) and s and all(type(n) is int and n > 0 for n in s) for s in value)
    )
    if not ok:
        raise FatalError(f"--inputs: expected a list of shapes (lists of positive integers), got {text!r}")
    return tuple(tuple(s) for s in value)


def load_from_args(args: argparse.Namespace) -> LoadedOperator:
    """The operator on the command line, with the settings given there."""
    from foundry.spec.loader import load_operator

    return load_operator(
        args.operator,
        precision=args.precision,
        training=args.training,
        input_shapes=shapes_from(args.inputs),
        input_dtype=args.dtype,
    )
