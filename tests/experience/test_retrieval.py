"""Retrieval: a library that holds verified kernels makes a new search of the same kind of operator start
from them; other kinds of operators do not get them; ranking prefers close, fast, same-GPU kernels."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest
import torch
from experience_factories import (
    GPU,
    candidate,
    layernorm_sig,
    linear_relu_sig,
    manual_softmax_sig,
    rejected,
    softmax_sig,
    spec,
    verified,
)
from foundry.core.protocols import ExperienceSink, Hint
from foundry.core.records import Candidate, OperatorSpec
from foundry.experience import ExperienceStore, HintResult
from foundry.experience.signature import OpSignature
from foundry.spec.signature import capture_signature
from torch import nn

SOFTMAX_KERNEL = "# softmax kernel: one row per program, online max and sum\nimport triton\n"


def library(path: Path) -> ExperienceStore:
    """A library holding what earlier runs in other repositories verified."""
    store = ExperienceStore(path)
    run = store.start_run(spec("softmax"), softmax_sig(), repo="acme/llm", gpu=GPU, run_id="old-softmax")
    run.record(spec(), candidate("s1", source="# naive softmax\n"), verified("s1", speedup=1.1))
    run.record(spec(), candidate("s2", source=SOFTMAX_KERNEL, BLOCK_SIZE=8192, num_warps=16),
               verified("s2", speedup=2.4))  # fmt: skip
    run.record(spec(), candidate("s3", source="# wrong softmax\n"), rejected("s3"))
    run.finish("improved")
    norm = store.start_run(spec("layernorm"), layernorm_sig(), repo="acme/vision", gpu=GPU, run_id="old-norm")
    norm.record(spec("layernorm"), candidate("n1", source="# layernorm kernel\n"), verified("n1", speedup=1.7))
    norm.finish("improved")
    lin = store.start_run(spec("linear"), linear_relu_sig(), repo="acme/vision", gpu=GPU, run_id="old-linear")
    lin.record(spec("linear"), candidate("l1", source="# matmul kernel\n"), verified("l1", speedup=1.3))
    lin.finish("improved")
    return store


def start(sink: ExperienceSink, operator: OperatorSpec, k: int) -> tuple[Sequence[Hint], Sequence[Candidate]]:
    """What the optimizer does at run start, through the protocol only."""
    return sink.retrieve(operator, k)


def test_a_softmax_like_search_starts_from_the_stored_softmax_kernel(tmp_path: Path) -> None:
    store = library(tmp_path / "lib.duckdb")
    session = store.start_run(spec("my-softmax"), manual_softmax_sig(), repo="other/repo", gpu=GPU, run_id="new")
    hints, kernels = start(session, spec("my-softmax"), 3)
    assert [k.source for k in kernels] == [SOFTMAX_KERNEL, "# naive softmax\n"]  # fastest first; no reject
    first = kernels[0]
    assert first.id.startswith("lib-") and first.generation == 0 and first.parent_id is None
    assert first.genes == {"BLOCK_SIZE": 8192, "num_warps": 16}
    assert "acme/llm" in first.notes and "2.40x" in first.notes
    assert "online-softmax-decomposed" in {h.id for h in hints}
    detail = session.retrieval.kernels[0]
    assert detail.origin_repo == "acme/llm" and detail.operator == "softmax" and detail.similarity > 0.9
    assert "similar verified kernel" in session.retrieval.summary()
    assert json.loads(store.run_row("new").retrieved_kernels) == [k.uid for k in session.retrieval.kernels]


def test_other_kinds_of_operators_do_not_get_the_softmax_kernel(tmp_path: Path) -> None:
    store = library(tmp_path / "lib.duckdb")
    norm = store.retrieve_for(layernorm_sig(2048, 768), k=5, gpu=GPU)
    assert [k.candidate.source for k in norm.kernels] == ["# layernorm kernel\n"]
    assert "welford-statistics" in {h.hint.id for h in norm.hints}
    assert "online-softmax" not in {h.hint.id for h in norm.hints}
    relu_only = store.retrieve_for(softmax_sig().model_copy(update={"ops": ("relu",)}), k=5)
    assert relu_only.kernels == ()


def test_ranking_prefers_same_gpu_then_speed_and_dedupes_sources(tmp_path: Path) -> None:
    store = ExperienceStore(tmp_path / "lib.duckdb", seeds=())
    a100 = store.start_run(spec(), softmax_sig(), gpu="NVIDIA A100", run_id="a100")
    a100.record(spec(), candidate("x", source="# fast on A100\n"), verified("x", speedup=2.0, device="NVIDIA A100"))
    h200 = store.start_run(spec(), softmax_sig(), gpu=GPU, run_id="h200")
    h200.record(spec(), candidate("y", source="# fast on H200\n"), verified("y", speedup=1.9))
    h200.record(spec(), candidate("z", source="# fast on A100\n"), verified("z", speedup=1.2))  # same source as x
    h200.record(spec(), candidate("w", source="# slow\n"), verified("w", speedup=1.01))

    on_h200 = store.retrieve_for(softmax_sig(), k=5, gpu=GPU).kernels
    assert [k.candidate.source for k in on_h200] == ["# fast on H200\n", "# fast on A100\n", "# slow\n"]
    on_a100 = store.retrieve_for(softmax_sig(), k=5, gpu="NVIDIA A100").kernels
    assert on_a100[0].candidate.source == "# fast on A100\n" and on_a100[0].gpu == "NVIDIA A100"
    assert len(store.retrieve_for(softmax_sig(), k=1, gpu=GPU).kernels) == 1
    assert store.retrieve_for(softmax_sig(), k=0).kernels == ()
    closer = store.retrieve_for(softmax_sig(64, 1000), k=5, gpu=GPU).kernels
    assert all(0.8 < k.similarity < 1.0 for k in closer)


def test_expert_filter_on_hints(tmp_path: Path) -> None:
    store = ExperienceStore(tmp_path / "lib.duckdb")
    contexts = {h.context for h in store.retrieve_for(softmax_sig(), k=20, expert="compute_restructuring").hints}
    assert contexts <= {"compute_restructuring", ""} and "compute_restructuring" in contexts


def test_help_is_reported_when_the_best_descends_from_retrieved_material(tmp_path: Path) -> None:
    store = library(tmp_path / "lib.duckdb")
    session = store.start_run(spec("my-softmax"), softmax_sig(2048, 2048), repo="other/repo", gpu=GPU, run_id="new")
    _, kernels = session.retrieve(spec("my-softmax"), 2)
    seeded = kernels[0]
    session.record(spec(), seeded, verified(seeded.id, speedup=2.2))
    child = candidate("g1-0", parent=seeded.id, source=SOFTMAX_KERNEL + "# tuned\n")
    session.record(spec(), child, verified("g1-0", speedup=2.6))
    note = session.finish("improved", best=child, best_verdict=verified("g1-0", speedup=2.6))
    assert note.helped is True
    assert note.retrieved_kernels == tuple(k.id for k in kernels)
    assert store.run_row("new").helped is True

    cold = store.start_run(spec("my-softmax"), softmax_sig(2048, 2048), gpu=GPU, run_id="cold")
    cold.retrieve(spec("my-softmax"), 2)
    own = candidate("own")
    cold.record(spec(), own, verified("own", speedup=1.05))
    assert cold.finish("no_gain", best=own, best_verdict=verified("own", speedup=1.05)).helped is False

    hinted = store.start_run(spec("my-softmax"), softmax_sig(2048, 2048), gpu=GPU, run_id="hinted")
    hints, _ = hinted.retrieve(spec("my-softmax"), 2)
    note = hinted.finish("improved", applied_hints={hints[0].id: HintResult(success=True, speedup=1.4)})
    assert note.helped is True


class Softmax(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=-1)


class ScaledSoftmax(nn.Module):  # another repository's way to write it
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        e = torch.exp(x - x.amax(dim=1, keepdim=True))
        return e / e.sum(dim=1, keepdim=True)


class RowNorm(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.layer_norm(x, x.shape[-1:])


@pytest.mark.parametrize("module, shape, found", [
    (ScaledSoftmax(), (1000, 3000), True),
    (Softmax(), (16, 512), True),
    (RowNorm(), (1000, 3000), False),
])  # fmt: skip
def test_retrieval_by_captured_signatures(
    tmp_path: Path, module: nn.Module, shape: tuple[int, int], found: bool
) -> None:
    store = ExperienceStore(tmp_path / "lib.duckdb", seeds=())
    stored = capture_signature(Softmax(), [torch.empty(4096, 4096)])
    run = store.start_run(spec(), stored, gpu=GPU, run_id="stored")
    run.record(spec(), candidate("s", source=SOFTMAX_KERNEL), verified("s", speedup=2.0))
    query = capture_signature(module, [torch.randn(*shape)])
    kernels = store.retrieve_for(query, k=3, gpu=GPU).kernels
    assert [k.candidate.source for k in kernels] == ([SOFTMAX_KERNEL] if found else [])


# -- the kernel's module must be buildable and loadable for the new operator -----------------------------------


class LibraryNorm(nn.Module):
    """LayerNorm over the last dimension: constructor (dim), state_dict norm.weight/norm.bias of [dim]."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x)


class OwnNorm(nn.Module):
    """The same computation written by hand: constructor (dim, eps), state_dict weight/bias."""

    def __init__(self, dim: int, eps: float) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.bias = nn.Parameter(torch.zeros(dim))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.layer_norm(x, x.shape[-1:], self.weight, self.bias, self.eps)


class PaddedNorm(LibraryNorm):
    """Same constructor and keys as LibraryNorm, but its parameters are not [dim]."""

    def __init__(self, dim: int) -> None:
        super().__init__(dim)
        self.norm = nn.LayerNorm(dim + 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(nn.functional.pad(x, (0, 8)))


NORM_KERNEL = "# layer norm kernel: ModelNew(dim) with norm.weight and norm.bias\nimport triton\n"


def norm_library(path: Path) -> ExperienceStore:
    store = ExperienceStore(path, seeds=())
    stored = capture_signature(LibraryNorm(512), [torch.empty(64, 512)], init=[512])
    run = store.start_run(spec("layernorm"), stored, gpu=GPU, run_id="stored-norm")
    run.record(spec("layernorm"), candidate("n", source=NORM_KERNEL), verified("n", speedup=1.8))
    run.finish("improved")
    return store


@pytest.mark.parametrize("module, init, found, why", [
    (LibraryNorm(1024), [1024], True, ""),  # other sizes: the constructor makes its parameters [dim]
    (OwnNorm(1024, 1e-5), [1024, 1e-05], False, "its constructor took (int), this operator's takes (int, float)"),
    (PaddedNorm(512), [512], False, "its state_dict entry norm.weight is float32 ['arg0'], this operator's is"),
])  # fmt: skip
def test_a_kernel_whose_module_would_not_load_is_not_retrieved(
    tmp_path: Path, module: nn.Module, init: list, found: bool, why: str
) -> None:
    store = norm_library(tmp_path / "lib.duckdb")
    query = capture_signature(module, [torch.randn(64, init[0])], init=init)
    retrieval = store.retrieve_for(query, k=3, gpu=GPU)
    assert [k.candidate.source for k in retrieval.kernels] == ([NORM_KERNEL] if found else [])
    if found:
        assert retrieval.unfit == ()
    else:
        (left_out,) = retrieval.unfit
        assert "(layernorm, " in left_out and why in left_out
        assert "left out: their constructor or state_dict does not fit" in retrieval.summary()


def test_state_dict_keys_must_match() -> None:
    stored = capture_signature(LibraryNorm(64), [torch.empty(4, 64)], init=[64])
    renamed = OwnNorm(64, 1e-5)
    query = capture_signature(renamed, [torch.randn(4, 64)], init=[64, 1e-5])
    interface = query.interface
    assert interface is not None and stored.interface is not None
    same_constructor = interface.model_copy(update={"init": stored.interface.init})
    why = same_constructor.misfit(stored.interface)
    assert why == "its state_dict lacks bias, weight; has norm.bias, norm.weight besides"


def test_signatures_stored_without_an_interface_fall_back_to_parameter_ranks() -> None:
    stored = layernorm_sig()  # recorded before interfaces: two 1-d parameters
    with_ranks = capture_signature(LibraryNorm(1024), [torch.randn(8, 1024)], init=[1024])
    assert with_ranks.misfit(stored) is None
    linear = capture_signature(nn.Linear(1024, 1024), [torch.randn(8, 1024)], init=[1024, 1024])
    assert linear.misfit(stored) == "its operator has 2 parameters and buffers of other dtypes or ranks"
    # A signature without an interface keeps the key it had before interfaces were recorded (the library's
    # stored rows are found by it); this is the key the earlier code gave this signature.
    assert OpSignature(ops=("softmax",)).key == "46d871201f14b994"
    assert stored.key == OpSignature.model_validate_json(stored.to_json()).key
