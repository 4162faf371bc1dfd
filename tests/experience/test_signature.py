"""Op signatures: capture from real modules, normalization, keys and the similarity measure."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch
from experience_factories import layernorm_sig, linear_relu_sig, manual_softmax_sig, softmax_sig
from foundry.experience.signature import (
    OperatorInterface,
    OpSignature,
    TensorInfo,
    normalize_op,
    shape_bucket,
    similarity,
)
from foundry.spec.loader import load_operator
from foundry.spec.signature import capture_signature, signature_of
from torch import nn


class Softmax(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=-1)


class ManualSoftmax(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shifted = torch.exp(x - x.amax(dim=-1, keepdim=True))
        return shifted / shifted.sum(dim=-1, keepdim=True)


class LinearGelu(nn.Module):
    def __init__(self, k: int, n: int) -> None:
        super().__init__()
        self.linear = nn.Linear(k, n)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.gelu(self.linear(x))


class Nonzero(nn.Module):  # data-dependent output shape: no fake-tensor kernel
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nonzero(x > 0).float().sum(dim=0)


def test_shape_buckets_are_powers_of_two() -> None:
    assert [shape_bucket(d) for d in (0, 1, 2, 3, 1000, 1024, 1025, 4097)] == [0, 1, 2, 4, 1024, 1024, 2048, 8192]


def test_normalization_drops_aliasing_and_folds_synonyms() -> None:
    assert normalize_op("_softmax") == "softmax"
    assert normalize_op("view") is None and normalize_op("empty_like") is None
    assert normalize_op("permute") == "permute"  # changes the access pattern: kept


def test_capture_softmax_at_full_size_without_running_it() -> None:
    sig = capture_signature(Softmax(), [torch.empty(8192, 8000)], label="softmax")
    assert sig.ops == ("softmax",)
    assert sig.dtype == "float32"
    assert sig.inputs == (TensorInfo(dtype="float32", shape=(8192, 8192)),)
    assert sig.outputs == (TensorInfo(dtype="float32", shape=(8192, 8192)),)
    assert {"softmax", "reduction"} <= sig.classes
    assert sig.label == "softmax"


def test_capture_records_parameters_and_the_decomposed_linear() -> None:
    sig = capture_signature(LinearGelu(300, 512), [torch.randn(64, 300)])
    assert sig.ops == ("t", "addmm", "gelu")
    assert sig.params == (TensorInfo(dtype="float32", shape=(512, 512)), TensorInfo(dtype="float32", shape=(512,)))
    assert {"matmul", "elementwise"} <= sig.classes


def test_capture_falls_back_to_a_real_run_for_data_dependent_ops() -> None:
    sig = capture_signature(Nonzero(), [torch.randn(16, 4)])
    assert "nonzero" in sig.ops
    assert sig.outputs == (TensorInfo(dtype="float32", shape=(2,)),)


def test_capture_of_half_precision_inputs() -> None:
    sig = capture_signature(Softmax(), [torch.randn(4, 100, dtype=torch.float16)])
    assert sig.dtype == "float16"
    assert sig.inputs[0].dtype == "float16"


def test_signature_of_a_kernelbench_file(tmp_path) -> None:
    op = tmp_path / "rownorm.py"
    op.write_text(
        "import torch\nfrom torch import nn\n\n"
        "class Model(nn.Module):\n"
        "    def forward(self, x):\n"
        "        return x / x.norm(dim=-1, keepdim=True)\n\n"
        "def get_inputs():\n    return [torch.randn(512, 3000)]\n\n"
        "def get_init_inputs():\n    return []\n\n"
        "def get_cpu_inputs():\n    return [torch.randn(8, 30)]\n"
    )
    loaded = load_operator(str(op))
    full, small = signature_of(loaded), signature_of(loaded, small=True)
    assert full.ops == small.ops and "div" in full.ops
    assert full.inputs[0].shape == (512, 4096) and small.inputs[0].shape == (8, 32)
    assert full.label == "rownorm"
    assert 0.7 < similarity(full, small) < 1.0
    assert full.interface == small.interface == OperatorInterface(init=(), state=())


def test_the_signature_of_a_file_records_how_its_module_is_built_and_loaded(tmp_path) -> None:
    op = tmp_path / "scaled_norm.py"
    op.write_text(
        "import torch\nfrom torch import nn\n\n"
        "class Model(nn.Module):\n"
        "    def __init__(self, groups, channels, eps):\n"
        "        super().__init__()\n"
        "        self.norm = nn.GroupNorm(groups, channels, eps=eps)\n"
        "        self.register_buffer('scale', torch.ones(1, channels, 1))\n\n"
        "    def forward(self, x):\n"
        "        return self.norm(x) * self.scale\n\n"
        "def get_inputs():\n    return [torch.randn(2, 16, 8)]\n\n"
        "def get_init_inputs():\n    return [4, 16, 1e-5]\n"
    )
    interface = signature_of(load_operator(str(op))).interface
    assert interface is not None and interface.init == ("int", "int", "float")
    assert [(e.name, e.shape) for e in interface.state] == [
        ("scale", ("1", "arg1", "1")),
        ("norm.weight", ("arg1",)),
        ("norm.bias", ("arg1",)),
    ]


def test_key_is_stable_and_ignores_the_label() -> None:
    a = softmax_sig()
    b = OpSignature.from_json(a.to_json())
    assert a.key == b.key == softmax_sig().key
    assert a.model_copy(update={"label": "other"}).key == a.key
    assert softmax_sig(cols=16384).key != a.key
    # the key is the same in another interpreter (no hash randomization)
    code = (
        "import sys; sys.path.insert(0, 'tests/experience'); from experience_factories import softmax_sig; "
        "print(softmax_sig().key)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == a.key


def test_similarity_ranks_kinds_of_operators() -> None:
    soft, soft_small, manual = softmax_sig(), softmax_sig(64, 1000), manual_softmax_sig()
    norm, linear = layernorm_sig(), linear_relu_sig()
    assert similarity(soft, soft) == 1.0
    assert similarity(soft, soft_small) == similarity(soft_small, soft)  # symmetric
    assert 0.8 < similarity(soft, soft_small) < 1.0
    assert similarity(soft, manual) > 0.9  # the hand-written softmax is recognized
    assert similarity(soft, softmax_sig(dtype="float16")) > 0.85
    assert similarity(soft, norm) < 0.5
    assert similarity(soft, linear) < 0.3
    assert similarity(norm, linear) < 0.5


@pytest.mark.parametrize("other", [softmax_sig(64, 1000), manual_softmax_sig(), layernorm_sig(), linear_relu_sig()])
def test_similarity_is_in_unit_range_and_below_one_for_different_signatures(other: OpSignature) -> None:
    assert 0.0 <= similarity(softmax_sig(), other) < 1.0


def test_record_module_needs_no_torch() -> None:
    code = (
        "import sys; import foundry.experience, foundry.experience.signature, foundry.experience.hints; "
        "assert 'torch' not in sys.modules, 'torch imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
