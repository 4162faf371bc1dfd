"""Gene row.welford=lane: looped mean/variance kept per lane (count, mean, M2 in every lane, no block-wide
reduction per tile) and the lanes merged once after the loop with Chan's formula — in the looped row
kernel and in the split-row partial kernel. Verified by the real evaluator under the Triton interpreter on
inputs far from zero mean (where a sum/sum-of-squares variance would lose digits), with tails that leave
lanes with different counts."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from codegen_helpers import EXAMPLES, code, evaluate, explain, request_for
from foundry.codegen import genes as G
from foundry.writers.template import TemplateWriter
from test_norm_split import GROUPNORM, LAYERNORM_EPILOGUE, operator_file


@pytest.fixture(scope="module")
def writer() -> TemplateWriter:
    return TemplateWriter()


CASES = [
    # looped kernel: rows of 105 in 16-wide tiles (the last tile 9 wide: lanes end with 6 or 7 elements)
    ("groupnorm-looped-lanes", GROUPNORM, {"row.welford": "lane", "row.max_single_n": 0, "row.BLOCK_N": 16}),
    # split rows: three chunks of 48/48/9, each chunk's lanes merged before its partials are stored
    ("groupnorm-split-lanes", GROUPNORM, {"row.welford": "lane", "row.split": 3, "row.BLOCK_N": 16}),
    # layer norm with the GELU/residual epilogue, looped, 200 = 12 x 16 + 8
    ("layernorm-looped-lanes", LAYERNORM_EPILOGUE, {"row.welford": "lane", "row.max_single_n": 0, "row.BLOCK_N": 16}),
]


@pytest.mark.interp
@pytest.mark.slow
@pytest.mark.parametrize(("name", "body", "genes"), CASES, ids=[c[0] for c in CASES])
def test_lane_statistics_are_verified(writer: TemplateWriter, tmp_path: Path, name: str, body: str, genes: dict):
    path = operator_file(tmp_path, body)
    source = writer.render(request_for(path).spec, genes)
    assert "_rmean = tl.sum(" in source, source  # the lanes' merge after the loop
    verdict = evaluate(path, source, name)
    assert verdict.verified, explain(verdict)


def test_lanes_keep_block_reductions_out_of_the_loop(writer: TemplateWriter):
    spec = request_for(EXAMPLES / "groupnorm.py").spec
    tile = writer.render(spec, {"row.max_single_n": 0, "row.welford": "tile"})
    lane = writer.render(spec, {"row.max_single_n": 0, "row.welford": "lane"})

    def loop_body(source: str) -> str:  # the statistics loop: the lines indented under its `for`
        lines = source.split("_loop_fwd_kernel(")[1].split("for start in range(0, N, BLOCK_N):")[1].splitlines()[1:]
        body = []
        for line in lines:
            if not line.startswith(" " * 8):
                break
            body.append(line)
        return "\n".join(body)

    assert "tl.sum(" in loop_body(tile)  # three block-wide reductions per tile
    assert "tl.sum(" not in loop_body(lane)  # none: per-lane updates only
    # the per-lane count (and mean, M2) of the summed value: one per lane of the tile, [BLOCK_M, BLOCK_N]
    counts = re.findall(r"^\s*(\w+)_count = tl\.zeros\(\[BLOCK_M, BLOCK_N\]", code(lane), flags=re.M)
    assert counts and all(f"{c}_m2 = tl.zeros([BLOCK_M, BLOCK_N]" in code(lane) for c in counts), counts


def test_the_gene_defaults_to_lanes_and_steps_to_tiles():
    assert G.DEFAULTS["row.welford"] == "lane"  # chosen by the H200 sweep (tests/gpu/split_sweep.py)
    assert G.step("row.welford", "lane", -1) == "tile"
