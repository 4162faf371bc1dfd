"""Gene row.occupancy: the one-launch split-row kernel's register cap (Triton's `maxnreg` launch option), sized so
that that many of its programs fit on one SM; 0 leaves registers to the compiler."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from codegen_helpers import EXAMPLES, code, evaluate, explain, one_launch_facts, request_for
from foundry.codegen import genes as G
from foundry.codegen.rowsplit import register_cap
from foundry.writers.template import TemplateWriter

ONE_LAUNCH = {"row.split": "auto", "row.combine": "one_kernel", "row.BLOCK_N": 8192, "row.num_warps": 4}


@pytest.mark.parametrize(
    ("threads", "programs", "cap"),
    [
        (128, 5, 96),  # 65536 / 640 = 102.4, down to a multiple of 8
        (128, 4, 128),
        (128, 8, 64),
        (256, 3, 80),  # 85.3
        (64, 2, 255),  # 512 would exceed what one thread may hold
        (1024, 2, 32),
        (1024, 3, None),  # 3072 threads do not fit on an SM: no cap can make them
        (128, 0, None),
    ],
)
def test_register_cap(threads: int, programs: int, cap: int | None):
    assert register_cap(threads, programs) == cap


def caps(source: str) -> set[str]:
    return set(re.findall(r"maxnreg=\d+", source))


def test_the_gene_caps_the_one_launch_kernel_only(writer: TemplateWriter):
    spec = request_for(EXAMPLES / "groupnorm.py").spec
    capped = code(writer.render(spec, {**ONE_LAUNCH, "row.occupancy": 5}))  # a launch per line
    launches = re.findall(r"^\s*(_\w+)\[.*\]\(.*\)$", capped, flags=re.M)
    assert len(launches) == 5, launches  # one launch, partials + merge, whole rows, looped rows
    [capped_launch] = [line for line in capped.splitlines() if "maxnreg=" in line]
    assert capped_launch.lstrip().startswith("_groupnorm_split_one_kernel[")
    assert capped_launch.endswith("num_warps=4, maxnreg=96)")
    # the other kernels run for other shapes (many rows, rows of more than 64 tiles) and keep loop state
    assert caps(writer.render(spec, {**ONE_LAUNCH, "row.occupancy": 0})) == set()
    assert caps(writer.render(spec, {**ONE_LAUNCH, "row.num_warps": 8, "row.occupancy": 3})) == {"maxnreg=80"}
    softmax = writer.render(request_for(EXAMPLES / "softmax.py").spec, {"row.occupancy": 5})
    assert caps(softmax) == set()  # no split rows: nothing to cap
    assert "row.occupancy" not in G.relevant({"pointwise"})
    assert G.DEFAULTS["row.occupancy"] == 0


def test_repair_clears_the_gene_where_there_is_no_one_launch_kernel():
    # a cap that would change no code would only make a second candidate of the same kernel
    assert (
        G.repair({"row.BLOCK_M": 1, "row.BLOCK_N": 2048, "row.max_single_n": 16384, "row.occupancy": 5})[
            "row.occupancy"
        ]
        == 0
    )
    two = {"row.BLOCK_M": 1, "row.BLOCK_N": 1024, "row.max_single_n": 16384, "row.split": "auto", "row.occupancy": 5}
    assert G.repair(two)["row.occupancy"] == 0
    assert G.repair({**two, "row.combine": "one_kernel"})["row.occupancy"] == 5


def test_generation_zero_seeds_the_one_launch_tile_at_five_programs_per_sm(writer: TemplateWriter):
    cands = writer.propose(request_for(EXAMPLES / "groupnorm.py", count=4, island=1))
    # the seeded one-launch candidate (a mutation of the two-kernel seed may also combine in one launch)
    [one] = [c for c in cands if c.notes.startswith("split rows in one launch")]
    assert one.genes["row.combine"] == "one_kernel"
    assert one.genes["row.occupancy"] == 5 and "maxnreg=96" in one.source


@pytest.mark.interp
@pytest.mark.slow
def test_a_capped_kernel_verifies_through_the_evaluator(writer: TemplateWriter):
    # the interpreter ignores the cap; what this shows is that the launch option passes every stage
    genes = {"row.split": 4, "row.combine": "one_kernel", "row.BLOCK_N": 8, "row.occupancy": 5}
    source = writer.render(request_for(EXAMPLES / "groupnorm.py").spec, genes)
    assert "maxnreg=" in source
    verdict = evaluate(EXAMPLES / "groupnorm.py", source, "occupancy-5")
    assert verdict.verified, explain(verdict)


@pytest.mark.slow
def test_the_cap_holds_in_the_sm90_compile(writer: TemplateWriter, tmp_path: Path):
    """Compiled for sm_90 here: the cap the gene asks for is the register count ptxas gives (the H200, triton 3.6:
    128 registers uncapped, 96 capped, 0.0793-0.0808 against 0.0780-0.0793 ms)."""
    path = tmp_path / "one.py"
    path.write_text(writer.render(request_for(EXAMPLES / "groupnorm.py").spec, ONE_LAUNCH))
    free, capped = one_launch_facts(path), one_launch_facts(path, maxnreg=96)
    if free["registers"] is None:
        pytest.skip("this Triton has no cuobjdump to read registers from")
    assert free["registers"] > 96 and capped["registers"] <= 96, (free, capped)
