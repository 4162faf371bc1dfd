"""Capture an operator's OpSignature: run the reference forward once under a TorchDispatchMode that
logs the aten ops, on fake tensors (no compute, no memory for the real sizes), falling back to a real
run under no_grad for ops that have no fake implementation. The record itself and the similarity
measure live in foundry.experience.signature, which needs no torch."""

from __future__ import annotations

import logging
import traceback
from collections.abc import Sequence
from typing import Any

import torch
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

from foundry.experience.signature import OperatorInterface, OpSignature, TensorInfo, normalize_op, shape_bucket
from foundry.spec.loader import LoadedOperator, SpecError

log = logging.getLogger(__name__)


def packet_name(func: Any) -> str:
    """aten.add.Tensor → add"""
    packet = getattr(func, "overloadpacket", None)
    name = getattr(packet, "__name__", None) or str(func)
    return name.split(".")[-1]


class OpRecorder(TorchDispatchMode):
    """Logs the normalized name of every aten op that reaches the dispatcher, in call order."""

    def __init__(self) -> None:
        super().__init__()
        self.ops: list[str] = []

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        name = normalize_op(packet_name(func))
        if name is not None:
            self.ops.append(name)
        return func(*args, **(kwargs or {}))


def tensor_info(value: Any) -> TensorInfo:
    if isinstance(value, torch.Tensor):
        dtype = str(value.dtype).removeprefix("torch.")
        return TensorInfo(dtype=dtype, shape=tuple(shape_bucket(int(d)) for d in value.shape))
    return TensorInfo(dtype="scalar")


def main_dtype(inputs: Sequence[Any]) -> str:
    for value in inputs:
        if isinstance(value, torch.Tensor) and value.is_floating_point():
            return str(value.dtype).removeprefix("torch.")
    for value in inputs:
        if isinstance(value, torch.Tensor):
            return str(value.dtype).removeprefix("torch.")
    return "float32"


def _run_fake(model: nn.Module, inputs: Sequence[Any]) -> tuple[list[str], Any]:
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode(allow_non_fake_inputs=True) as fake:
        fake_inputs = [fake.from_tensor(x) if isinstance(x, torch.Tensor) else x for x in inputs]
        recorder = OpRecorder()
        with torch.no_grad(), recorder:
            output = model(*fake_inputs)
    return recorder.ops, output


def _run_real(model: nn.Module, inputs: Sequence[Any]) -> tuple[list[str], Any]:
    recorder = OpRecorder()
    with torch.no_grad(), recorder:
        output = model(*inputs)
    return recorder.ops, output


def interface_of(model: nn.Module, init: Sequence[Any]) -> OperatorInterface:
    """How the module is built (its constructor arguments) and loaded (its state_dict)."""
    state = [
        (name, str(value.dtype).removeprefix("torch."), tuple(int(d) for d in value.shape))
        for name, value in model.state_dict().items()
        if isinstance(value, torch.Tensor)
    ]
    return OperatorInterface.of(list(init), state)


def capture_signature(
    model: nn.Module, inputs: Sequence[Any], *, label: str = "", init: Sequence[Any] | None = None
) -> OpSignature:
    """The OpSignature of model(*inputs): aten ops of one forward, dtypes and shape buckets; with `init`,
    the constructor arguments model was built with, also its interface (constructor and state_dict)."""
    try:
        ops, output = _run_fake(model, inputs)
    except Exception as exc:  # an op without a fake kernel, data-dependent shapes …
        log.debug("signature: fake-tensor capture failed (%s); running the reference for real", exc)
        ops, output = _run_real(model, inputs)
    outputs = tuple(tensor_info(t) for t in tree_leaves(output) if isinstance(t, torch.Tensor))
    params = tuple(tensor_info(p) for p in list(model.parameters()) + list(model.buffers()))
    return OpSignature(
        ops=tuple(ops),
        dtype=main_dtype(inputs),
        inputs=tuple(tensor_info(x) for x in inputs),
        params=params,
        outputs=outputs,
        interface=interface_of(model, init) if init is not None else None,
        label=label,
    )


def signature_of(loaded: LoadedOperator, *, small: bool = False) -> OpSignature:
    """The signature of a loaded operator at its declared shapes (small: its CPU shapes). It runs the
    reference once, so it is also the check that the operator works: a constructor, an inputs function or a
    forward that raises is the user's input to fix (SpecError, exit 2), never a candidate's or writer's
    failure."""
    model = loaded.build(small)
    model.eval()
    inputs = loaded.inputs(small)
    init = loaded.init_inputs(small)
    try:
        return capture_signature(model, inputs, label=loaded.spec.name, init=init)
    except Exception as exc:
        last = traceback.format_exception_only(exc)[-1].strip()
        call = f"{loaded.spec.class_name}(...).forward(*{loaded.inputs_function(small)}())"
        raise SpecError(f"{loaded.path}: the operator does not run: {call} raised {last}") from exc
