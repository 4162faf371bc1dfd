"""Seed hints: the shipped YAML is valid and its triggers are evaluable against signatures and diagnoses."""

from __future__ import annotations

from pathlib import Path

import pytest
from experience_factories import layernorm_sig, linear_relu_sig, manual_softmax_sig, rejected, softmax_sig, verified
from foundry.core.records import FailureKind
from foundry.experience.hints import (
    DiagnosisFacts,
    HintDef,
    SeedError,
    Trigger,
    facts_from_verdict,
    load_seed_hints,
    seeds_dir,
)
from foundry.experience.signature import OpSignature, TensorInfo

PRACTICES = {
    "coalesced-access", "vectorized-access", "elementwise-block-size", "row-per-program", "persistent-kernel",
    "split-k", "epilogue-fusion", "online-softmax", "welford-statistics", "tf32x3-precision", "avoid-spills",
    "matmul-tile-sizes", "grouped-program-order",
}  # fmt: skip
EXPERTS = {"", "fusion", "memory_access", "tiling_launch", "compute_restructuring"}


def matching(hints: tuple[HintDef, ...], sig: OpSignature | None, facts: DiagnosisFacts | None = None) -> set[str]:
    return {h.id for h in hints if h.trigger.matches(sig, facts)}


def test_shipped_seeds_cover_the_known_practices() -> None:
    hints = load_seed_hints()
    assert seeds_dir() == Path(__file__).resolve().parents[2] / "experience" / "seeds"
    ids = {h.id for h in hints}
    assert PRACTICES <= ids
    assert len(ids) == len(hints) >= 20
    for hint in hints:
        assert hint.context in EXPERTS, hint.id
        assert len(hint.suggestion) > 80, hint.id
        assert hint.trigger.signature_conditions() or hint.trigger.diagnosis_conditions(), hint.id


def test_seed_triggers_follow_the_operator() -> None:
    hints = load_seed_hints()
    soft = matching(hints, softmax_sig())
    assert {"online-softmax", "row-per-program", "vectorized-access"} <= soft
    assert not soft & {"split-k", "matmul-tile-sizes", "welford-statistics", "epilogue-fusion"}
    assert "online-softmax-decomposed" in matching(hints, manual_softmax_sig())
    assert "welford-statistics" in matching(hints, layernorm_sig())
    linear = matching(hints, linear_relu_sig())
    assert {"matmul-tile-sizes", "split-k", "epilogue-fusion", "tf32x3-precision"} <= linear
    assert "online-softmax" not in linear
    assert "tf32x3-precision" not in matching(hints, linear_relu_sig().model_copy(update={"dtype": "float16"}))


def test_diagnosis_hints_need_a_diagnosis() -> None:
    hints = load_seed_hints()
    assert "avoid-spills" not in matching(hints, softmax_sig())  # run start: no diagnosis yet
    spilled = facts_from_verdict(verified("c", spills=24))
    assert spilled.spills == 24 and spilled.bound == "memory" and spilled.pct_of_floor == 50.0
    assert "avoid-spills" in matching(hints, softmax_sig(), spilled)
    assert "avoid-spills" not in matching(hints, softmax_sig(), facts_from_verdict(verified("c", spills=0)))
    mismatch = facts_from_verdict(rejected("c", FailureKind.MISMATCH))
    assert mismatch.failure is FailureKind.MISMATCH and mismatch.verified is False
    assert "mismatch-accumulate-fp32" in matching(hints, softmax_sig(), mismatch)
    assert "mismatch-accumulate-fp32" not in matching(hints, softmax_sig(), spilled)
    assert "coalesced-access" in matching(hints, None, spilled)  # bound memory, 50 % of the floor


def test_trigger_conditions() -> None:
    big = OpSignature(ops=("sum",), inputs=(TensorInfo(dtype="float32", shape=(16, 65536)),))
    trigger = Trigger(classes_any=["reduction"], min_last_dim=32768, max_numel=1 << 21)
    assert trigger.matches(big)
    assert not trigger.matches(big.model_copy(update={"inputs": (TensorInfo(dtype="float32", shape=(16, 1024)),)}))
    assert not Trigger(classes_none=["reduction"]).matches(big)
    assert Trigger(ops_all=["sum"], dtypes=["float32"]).matches(big)
    assert not Trigger(ops_all=["sum", "exp"]).matches(big)
    assert Trigger().matches(None)  # no condition: always
    assert not Trigger(ops_any=["sum"]).matches(None)  # a signature condition needs a signature
    assert Trigger(bound=["latency"], max_pct_of_floor=20).matches(
        None, DiagnosisFacts(bound="latency", pct_of_floor=5)
    )
    assert not Trigger(bound=["latency"], max_pct_of_floor=20).matches(None, DiagnosisFacts(bound="latency"))


def test_unknown_trigger_fields_and_classes_are_errors() -> None:
    with pytest.raises(ValueError, match="unknown op class"):
        Trigger(classes_any=["matmull"])
    with pytest.raises(ValueError):
        Trigger.model_validate({"bound": ["memory"], "when": "always"})
    with pytest.raises(ValueError):
        Trigger.model_validate({"failure": ["no_such_failure"]})


def test_invalid_seed_files_are_reported(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("version: 1\nhints:\n  - id: x\n    title: X\n    suggestion: s\n")
    assert [h.id for h in load_seed_hints(tmp_path)] == ["x"]
    (tmp_path / "b.yaml").write_text("version: 1\nhints:\n  - id: x\n    title: X again\n    suggestion: s\n")
    with pytest.raises(SeedError, match="defined twice"):
        load_seed_hints(tmp_path)
    (tmp_path / "b.yaml").write_text(
        "version: 1\nhints:\n  - id: y\n    title: Y\n    suggestion: s\n    tirgger: {}\n"
    )
    with pytest.raises(SeedError, match="b.yaml"):
        load_seed_hints(tmp_path)
    (tmp_path / "b.yaml").write_text("version: 1\nhints: [unclosed\n")
    with pytest.raises(SeedError, match="b.yaml"):
        load_seed_hints(tmp_path)


def test_seed_genes_are_in_the_template_writers_gene_space() -> None:
    """The template writer warm-starts from hint genes it knows; a misspelt name or value would be
    silently ignored there, so pin the seeds to its gene space (names outside it are for the LLM only)."""
    from foundry.codegen.genes import SPACE

    llm_only = {"split_k"}
    for hint in load_seed_hints():
        for name, value in hint.genes.items():
            if name in llm_only:
                continue
            assert name in SPACE, f"{hint.id}: unknown gene {name}"
            assert value in SPACE[name], f"{hint.id}: {name}={value!r} is not one of {SPACE[name]}"


def test_convolution_seeds_follow_the_operator_and_its_diagnosis() -> None:
    from experience_factories import tensor

    hints = load_seed_hints()
    conv = OpSignature(
        ops=("convolution", "relu", "max_pool2d_with_indices"),
        inputs=(tensor(16, 64, 128, 128),),
        params=(tensor(128, 64, 3, 3), tensor(128)),
        outputs=(tensor(16, 128, 64, 64),),
    )
    at_start = matching(hints, conv)
    assert {
        "conv-epilogue-fusion",
        "pool-fused-prologue",
        "tf32x3-precision",
        "conv-channels-last-tap-major",
    } <= at_start
    assert "conv-split-k-few-tiles" not in at_start  # a diagnosis hint: latency-bound tiles only
    assert not at_start & {"conv-implicit-gemm-tensor-cores", "conv-direct-for-narrow-groups", "online-softmax"}
    slow_compute = DiagnosisFacts(verified=True, bound="compute", pct_of_floor=30.0, spills=0)
    after = matching(hints, conv, slow_compute)
    assert {"conv-implicit-gemm-tensor-cores", "conv-library-with-triton-epilogue"} <= after
    assert "conv-direct-for-narrow-groups" not in after
    assert "conv-smaller-tile-on-spills" in matching(hints, conv, slow_compute.model_copy(update={"spills": 64}))
    assert "conv-split-k-few-tiles" not in after
    assert "conv-split-k-few-tiles" in matching(hints, conv, slow_compute.model_copy(update={"bound": "latency"}))
    assert not matching(hints, softmax_sig()) & {h.id for h in hints if h.id.startswith(("conv-", "pool-"))}
