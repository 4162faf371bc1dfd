"""Each kernel shape the codegen emits, forced through its alternative code paths by genes, verified by
the evaluator under the Triton interpreter: looped rows (several passes, online max+sum), two-pass
reductions, several rows per program, tiny strided tiles, split partials, matmul precision schemes,
and fusion boundaries moved."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from codegen_helpers import EXAMPLES, OPERATORS, evaluate, explain, header_genes, request_for
from foundry.writers.template import TemplateWriter

pytestmark = [pytest.mark.interp, pytest.mark.slow]

LOOPED = {"row.max_single_n": 0, "row.BLOCK_N": 256, "row.BLOCK_M": 2}
CASES = [
    ("softmax", EXAMPLES / "softmax.py", LOOPED),
    ("softmax-two-pass", EXAMPLES / "softmax.py", {**LOOPED, "row.online_reduction": False}),
    ("softmax-rows-per-program", EXAMPLES / "softmax.py", {"row.BLOCK_M": 4, "row.max_single_n": 1024}),
    ("log-softmax-looped", EXAMPLES / "log_softmax.py", LOOPED),
    ("logsumexp-looped", EXAMPLES / "logsumexp.py", LOOPED),
    ("layernorm-looped", EXAMPLES / "layernorm.py", LOOPED),
    ("rmsnorm-looped", EXAMPLES / "rmsnorm.py", LOOPED),
    ("groupnorm-looped", EXAMPLES / "groupnorm.py", {**LOOPED, "row.BLOCK_N": 256}),
    ("argmax-looped", EXAMPLES / "argmax_rows.py", LOOPED),
    ("cross-entropy-looped", EXAMPLES / "cross_entropy.py", {**LOOPED, "full.BLOCK_SIZE": 512, "full.partials": 132}),
    ("picked-logits-looped", OPERATORS / "picked_logits.py", LOOPED),  # gathers loaded directly, ignored targets
    ("picked-logits-whole-rows", OPERATORS / "picked_logits.py", {}),
    ("misc-reductions", OPERATORS / "reductions_misc.py", {}),
    ("masked-middle-sum", OPERATORS / "masked_middle_sum.py", {}),  # a strided broadcast operand: group_step
    ("misc-reductions-looped-unmerged", OPERATORS / "reductions_misc.py", {**LOOPED, "plan.merge_reductions": False}),
    ("activations", OPERATORS / "activations.py", {"pointwise.BLOCK_SIZE": 256, "pointwise.layout": "flat"}),
    ("activations-rows", OPERATORS / "activations.py", {"pointwise.BLOCK_SIZE": 16, "pointwise.layout": "rows"}),
    ("bias-gelu-rows", EXAMPLES / "bias_gelu_scale.py", {"pointwise.BLOCK_SIZE": 16, "pointwise.layout": "rows"}),
    ("bias-gelu-flat", EXAMPLES / "bias_gelu_scale.py", {"pointwise.layout": "flat"}),
    ("channel-affine-rows-default", OPERATORS / "channel_affine.py", {}),
    ("batchnorm-rows", EXAMPLES / "batchnorm_relu.py", {"pointwise.BLOCK_SIZE": 16, "pointwise.layout": "rows"}),
    ("mean-dim1-small-tiles", EXAMPLES / "mean_dim1.py", {"col.BLOCK_R": 4, "col.BLOCK_I": 16}),
    ("min-dim-small-tiles", EXAMPLES / "min_dim.py", {"col.BLOCK_R": 4, "col.BLOCK_I": 16}),
    # reduced rows split into chunks, partials merged by a second kernel: a sum with its mean epilogue, a min
    ("mean-dim1-split", EXAMPLES / "mean_dim1.py", {"col.BLOCK_R": 4, "col.BLOCK_I": 16, "col.split": 4}),
    ("min-dim-split", EXAMPLES / "min_dim.py", {"col.BLOCK_R": 4, "col.split": 8}),
    ("losses", OPERATORS / "losses.py", {}),
    ("mse-many-partials", EXAMPLES / "mse_loss.py", {"full.BLOCK_SIZE": 512, "full.partials": 2112}),
    ("frobenius-unmerged", EXAMPLES / "frobenius_scale.py", {"plan.merge_reductions": False}),
    (
        "linear-split3",
        EXAMPLES / "linear_bias_relu.py",
        {"matmul.precision": "split3", "matmul.BLOCK_M": 16, "matmul.BLOCK_N": 32, "matmul.BLOCK_K": 16},
    ),
    (
        "linear-tf32x3-unfused",
        EXAMPLES / "linear_gelu_3d.py",
        {"matmul.precision": "tf32x3", "plan.fuse_epilogue": False},
    ),
    (
        "bmm-small-tiles",
        EXAMPLES / "batched_matmul.py",
        {"matmul.BLOCK_M": 16, "matmul.BLOCK_N": 16, "matmul.BLOCK_K": 16, "matmul.GROUP_M": 1},
    ),
    (
        "matmul-residual-grouped",
        EXAMPLES / "matmul_scaled_residual.py",
        {"matmul.BLOCK_M": 16, "matmul.BLOCK_N": 16, "matmul.GROUP_M": 4},
    ),
]


@pytest.mark.parametrize(("name", "path", "genes"), CASES, ids=[c[0] for c in CASES])
def test_pattern_variant_is_verified(writer: TemplateWriter, name: str, path: Path, genes: dict):
    spec = request_for(path).spec
    source = writer.render(spec, genes)
    for gene, value in genes.items():
        assert f"{gene}={value}" in header_genes(source)  # the header names the genes it was built from
    verdict = evaluate(path, source, name)
    assert verdict.verified, explain(verdict)


def test_looped_softmax_uses_one_online_pass_then_a_store_pass(writer: TemplateWriter):
    source = writer.render(request_for(EXAMPLES / "softmax.py").spec, LOOPED)
    loop_kernel = source.split("def _softmax_loop_fwd_kernel")[1].split("def softmax_forward")[0]
    assert loop_kernel.count("for start in range(0, N, BLOCK_N):") == 2
    assert "_run * tl.exp(" in loop_kernel
    two_pass = writer.render(request_for(EXAMPLES / "softmax.py").spec, {**LOOPED, "row.online_reduction": False})
    kernel = two_pass.split("def _softmax_loop_fwd_kernel")[1].split("def softmax_forward")[0]
    assert kernel.count("for start in range(0, N, BLOCK_N):") == 3


def test_a_picked_input_logit_is_one_load_and_a_picked_value_a_tile_sum(writer: TemplateWriter):
    source = writer.render(request_for(OPERATORS / "picked_logits.py").spec, LOOPED)
    loops = [k for k in source.split("@triton.jit") if "_loop_fwd_kernel(" in k]
    load = "tl.load(logits_ptr + row_off + target, mask=row_mask & (target >= 0) & (target < N)"
    [direct] = [k for k in loops if load in k]  # nll of log_softmax(logits): the input's own logit
    assert "cols == target" not in direct
    assert direct.index(load) < direct.index("for start in range(0, N, BLOCK_N):")  # once per row, before the loop
    [scaled] = [k for k in loops if k is not direct]  # cross_entropy(logits * 1.5): a computed value, tile by tile
    assert re.search(r"tl\.where\(mask & \(cols == target\), mul(_\d+)?, 0\.0\)", scaled), scaled


def test_fusion_genes_change_the_number_of_kernels(writer: TemplateWriter):
    spec = request_for(EXAMPLES / "linear_bias_relu.py").spec
    fused = writer.render(spec, {"plan.fuse_epilogue": True})
    split = writer.render(spec, {"plan.fuse_epilogue": False})
    launchers = lambda src: [line for line in src.splitlines() if line.startswith("def ") and "_forward(" in line]
    assert len(launchers(fused)) == 1
    assert len(launchers(split)) == 2
