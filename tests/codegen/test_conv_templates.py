"""Convolution-family templates under the Triton interpreter, across parameter combinations: conv1d/2d/3d
(stride, padding, dilation, groups, depthwise, 1x1, no bias), transposed conv1d/2d/3d (output padding
too), max/avg pooling 1d/2d/3d, each with an epilogue, each conv algorithm (implicit GEMM, direct, plane).

Each case writes a small operator file, renders the template candidate, runs it in-process on the
declared inputs and a shape variant with perturbed parameters, and compares with the reference at the
fp32 tolerance of rules/tolerance.yaml. The evaluator's full protocol runs in test_conv_evaluator.py."""

from __future__ import annotations

import importlib.util
import textwrap
from pathlib import Path
from typing import Any

import pytest
import torch
from codegen_helpers import EXAMPLES, launched_kinds
from foundry.codegen import genes as G
from foundry.codegen.expr import JIT_HELPERS
from foundry.rules.loader import load_rules
from foundry.spec.loader import load_operator
from foundry.writers.template import TemplateWriter

pytestmark = [pytest.mark.interp]

HEADER = "import torch\nfrom torch import nn\nfrom torch.nn import functional as F\n\nFOUNDRY_PRECISION = 'fp32'\n"


def operator_file(tmp: Path, params: str, init: str, forward: str, shapes: list[tuple], init_args: list) -> Path:
    """A KernelBench-format operator: __init__(self, <params>) runs `init`, forward(self, x[, y]) runs `forward`;
    inputs of `shapes`, plus a variant with one row fewer in the batch dim."""
    names = ["x", "y", "z"][: len(shapes)]
    variant = [(s[0] - 1, *s[1:]) if s[0] > 1 and len(s) >= 3 else s for s in shapes]
    lines = [
        HEADER,
        "",
        "class Model(nn.Module):",
        f"    def __init__(self{', ' + params if params else ''}):",
        "        super().__init__()",
        *textwrap.indent(textwrap.dedent(init).strip() or "pass", " " * 8).splitlines(),
        "",
        f"    def forward(self, {', '.join(names)}):",
        *textwrap.indent(textwrap.dedent(forward).strip(), " " * 8).splitlines(),
        "",
        "",
        "def get_inputs():",
        f"    return [{', '.join(f'torch.randn{tuple(s)!r}' for s in shapes)}]",
        "",
        "",
        "def get_init_inputs():",
        f"    return {init_args!r}",
        "",
        "",
        "def get_cpu_shape_variants():",
        f"    return [[{', '.join(f'torch.randn{tuple(s)!r}' for s in variant)}]]",
        "",
    ]
    path = tmp / "op.py"
    path.write_text("\n".join(lines))
    return path


def import_source(path: Path, source: str) -> Any:
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def check_candidate(writer: TemplateWriter, path: Path, genes: dict[str, Any], seed: int = 0) -> str:
    """Render the candidate for `genes`, run it under the interpreter with perturbed parameters on the
    declared inputs and variants, assert it matches the reference within the fp32 tolerance."""
    loaded = load_operator(str(path))
    source = writer.render(loaded.spec, genes)
    candidate = import_source(path.with_name(f"cand_{abs(hash(str(sorted(genes.items()))))}.py"), source)
    torch.manual_seed(seed)
    ref = loaded.model_cls(*loaded.init_inputs(small=True)).eval()
    with torch.no_grad():
        for p in ref.parameters():
            p.add_(torch.randn_like(p) * 0.1)
    new = candidate.ModelNew(*loaded.init_inputs(small=True)).eval()
    new.load_state_dict(ref.state_dict())
    tol = load_rules().tolerance.for_precision("fp32")
    for inputs in [loaded.inputs(small=True), *loaded.variants(small=True)]:
        with torch.no_grad():
            want = ref(*inputs)
            got = new(*inputs)
        assert got.shape == want.shape
        torch.testing.assert_close(got, want, atol=tol.atol, rtol=tol.rtol)
    return source


SMALL = {"conv.BLOCK_M": 32, "conv.BLOCK_N": 16, "conv.BLOCK_K": 16}

# (id, module constructor, input shape, epilogue applied to `y = self.conv(x)`)
CONVS = [
    ("1d-stride2-pad1", "nn.Conv1d(4, 6, 3, stride=2, padding=1)", (2, 4, 11), "torch.relu(y)"),
    (
        "1d-dil3-groups2-nobias",
        "nn.Conv1d(4, 6, 5, padding=4, dilation=3, groups=2, bias=False)",
        (2, 4, 13),
        "y * 2.0",
    ),
    ("2d-odd-3x3", "nn.Conv2d(3, 5, 3, padding=1)", (2, 3, 7, 5), "torch.sigmoid(y)"),
    (
        "2d-rect-kernel-mixed",
        "nn.Conv2d(3, 4, (3, 2), stride=(2, 1), padding=(1, 0), dilation=(1, 2), bias=False)",
        (2, 3, 9, 7),
        "F.gelu(y)",
    ),
    ("2d-depthwise-x2-stride2", "nn.Conv2d(6, 12, 3, stride=2, padding=1, groups=6)", (2, 6, 7, 8), "F.hardswish(y)"),
    ("2d-pointwise-1x1-stride2", "nn.Conv2d(5, 7, 1, stride=2)", (2, 5, 7, 6), "torch.clamp(y, -0.5, 0.5)"),
    ("2d-grouped3-dil2", "nn.Conv2d(6, 9, 3, padding=2, dilation=2, groups=3)", (1, 6, 6, 7), "F.silu(y)"),
    ("3d-stride-121", "nn.Conv3d(2, 3, 3, stride=(1, 2, 1), padding=1)", (2, 2, 4, 5, 3), "F.leaky_relu(y, 0.2)"),
    ("3d-depthwise-rect", "nn.Conv3d(4, 4, (2, 3, 1), padding=(1, 1, 0), groups=4)", (2, 4, 3, 5, 4), "torch.tanh(y)"),
    (
        "t1d-stride2-outpad1",
        "nn.ConvTranspose1d(4, 5, 3, stride=2, padding=1, output_padding=1)",
        (2, 4, 6),
        "torch.relu(y)",
    ),
    (
        "t2d-k4-s2-groups2",
        "nn.ConvTranspose2d(4, 6, 4, stride=2, padding=1, groups=2)",
        (2, 4, 3, 5),
        "F.gelu(y, approximate='tanh')",
    ),
    (
        "t2d-s3-dil2-outpad2",
        "nn.ConvTranspose2d(3, 4, 3, stride=3, dilation=2, output_padding=2, bias=False)",
        (2, 3, 3, 2),
        "y - 0.25",
    ),
    (
        "t2d-rect-mixed",
        "nn.ConvTranspose2d(3, 2, (3, 2), stride=(1, 2), padding=(1, 0), output_padding=(0, 1))",
        (2, 3, 4, 3),
        "torch.sigmoid(y)",
    ),
    ("t3d-s2-outpad1", "nn.ConvTranspose3d(2, 3, 3, stride=2, padding=1, output_padding=1)", (2, 2, 2, 3, 2), "y * y"),
    ("t3d-depthwise-s2", "nn.ConvTranspose3d(3, 3, 2, stride=2, groups=3)", (2, 3, 2, 2, 3), "F.elu(y)"),
]


@pytest.mark.parametrize("algo", ["gemm", "gemm-tap", "gemm-cl", "gemm-tap-cl", "direct", "plane"])
@pytest.mark.parametrize(("name", "module", "shape", "epilogue"), CONVS, ids=[c[0] for c in CONVS])
def test_conv_matches_reference(tmp_path, writer, name, module, shape, epilogue, algo):
    path = operator_file(tmp_path, "", f"self.conv = {module}", f"y = self.conv(x)\nreturn {epilogue}", [shape], [])
    kind, *variant = algo.split("-")
    genes = {
        **SMALL,
        "conv.algo": kind,
        "conv.k_order": "tap" if "tap" in variant else "channel",
        "conv.layout": "channels_last" if "cl" in variant else "nchw",
    }
    source = check_candidate(writer, path, genes)
    marks = {"gemm": "tl.dot(", "direct": "acc += a * wv", "plane": "tl.static_range(K0)"}
    assert all((mark in source) == (a == kind) for a, mark in marks.items())
    # the GEMM's K order: one flat channel x tap range, or taps outside the in-channels (weight [C_OUT, taps, CIG])
    assert ("for cb in range(0, CIG, BLOCK_K):" in source) == ("tap" in variant)
    assert ("for kk in range(0, " in source) == (kind == "gemm" and "tap" not in variant)
    # channels-last staging: the GEMM reads a copy with in-channels contiguous (K runs in-channels fastest)
    assert ("xcl = " in source and "xcl_ptr + n_idx" in source) == ("cl" in variant)
    assert "torch.convolution" not in source
    strided_transposed = "Transpose" in module and "stride=" in module and "dilation" not in module
    assert ("phase = tl.program_id(2)" in source) == (strided_transposed and kind == "gemm")  # sub-pixel form


SPLIT_CONVS = [
    # (id, module, input shapes, forward): K = 40 in-channels x 9 taps = 23 blocks of 16 (flat), 3 per tap
    ("2d-deep", "nn.Conv2d(40, 20, 3, padding=1)", [(2, 40, 5, 4), (2, 20, 5, 4)], "return torch.relu(c) + y"),
    ("1d-grouped", "nn.Conv1d(40, 24, 3, stride=2, groups=2)", [(2, 40, 9)], "return c * self.scale"),
    (
        "t2d-s2",
        "nn.ConvTranspose2d(36, 18, 3, stride=2, padding=1, output_padding=1)",
        [(1, 36, 3, 4)],
        "return F.gelu(c)",
    ),
]


@pytest.mark.parametrize("split", [2, 4])
@pytest.mark.parametrize("variant", ["flat", "tap-cl"])
@pytest.mark.parametrize(("name", "module", "shapes", "forward"), SPLIT_CONVS, ids=[c[0] for c in SPLIT_CONVS])
def test_split_k_partials_sum_to_the_convolution(tmp_path, writer, name, module, shapes, forward, variant, split):
    """Split-K: programs share each output tile's K range (flat K blocks, or the in-channels of each tap), write
    fp32 partials, and one flat kernel adds them up and runs the epilogue (a residual, a per-channel scale);
    with 4 splits of the tap-major loop's 3 channel blocks one share is empty and must add nothing."""
    params = "\nself.scale = nn.Parameter(torch.ones(24, 1))" if "scale" in forward else ""
    path = operator_file(tmp_path, "", f"self.conv = {module}{params}", f"c = self.conv(x)\n{forward}", shapes, [])
    genes = {
        **SMALL,
        "conv.algo": "gemm",
        "conv.split_k": split,
        "conv.k_order": "tap" if variant == "tap-cl" else "channel",
        "conv.layout": "channels_last" if variant == "tap-cl" else "nchw",
    }
    source = check_candidate(writer, path, genes)
    assert "ks = tl.program_id(2)" in source and f"SPLIT_K={split}" in source
    assert "tl.store(part_ptr + part_off, acc" in source  # partials, not the output, from the GEMM
    assert "for sk in tl.static_range(1, SPLIT_K):" in source  # the epilogue kernel sums them
    assert source.count("@triton.jit") == 2


def test_split_k_is_ignored_where_the_epilogue_reduces_over_channels(tmp_path, writer):
    path = operator_file(
        tmp_path, "", "self.conv = nn.Conv2d(20, 24, 3)", "return self.conv(x).mean(dim=1)", [(2, 20, 5, 6)], []
    )
    source = check_candidate(writer, path, {**SMALL, "conv.algo": "gemm", "conv.split_k": 4})
    assert "SPLIT_K" not in source and source.count("@triton.jit") == 1


def test_auto_algo_picks_by_group_width_at_run_time(tmp_path, writer):
    """A wide conv (>= 16 channels per group: GEMM), a depthwise one (plane) and a narrow grouped one (2 in-
    and 2 out-channels per group: direct) through the same "auto" launcher."""
    path = operator_file(
        tmp_path,
        "",
        "self.wide = nn.Conv2d(4, 16, 3, padding=1)\nself.dw = nn.Conv2d(16, 16, 3, padding=1, groups=16)\n"
        "self.narrow = nn.Conv2d(16, 16, 3, padding=1, groups=8)",
        "return torch.relu(self.narrow(self.dw(self.wide(x))))",
        [(2, 4, 5, 6)],
        [],
    )
    source = check_candidate(writer, path, {**SMALL, "conv.algo": "auto"})
    assert "if COG >= 16 and KTOT >= 16:" in source and "elif CIG == 1:" in source
    for algo in ("gemm", "plane", "direct"):
        assert f"_{algo}_fwd_kernel[" in source, algo


@pytest.mark.parametrize("layout", ["nchw", "channels_last"])
def test_epilogue_operands_broadcast_every_way(tmp_path, writer, layout):
    """Residual (full), per-channel parameter, a row-broadcast input (partly broadcast spatial dims), a
    per-sample input and a scalar parameter, all in the conv's epilogue: one kernel."""
    path = operator_file(
        tmp_path,
        "",
        """
        self.conv = nn.Conv2d(4, 4, 3, padding=1)
        self.scale = nn.Parameter(torch.ones(4, 1, 1))
        self.gain = nn.Parameter(torch.ones(()))
        """,
        """
        y_ = self.conv(x) * self.scale + x
        return torch.relu(y_ * self.gain + y) - z
        """,
        [(2, 4, 5, 6), (5, 1), (2, 1, 1, 1)],
        [],
    )
    # with channels_last the GEMM reads the staged copy and the residual the input as given
    source = check_candidate(writer, path, {**SMALL, "conv.algo": "gemm", "conv.layout": layout})
    assert source.count("@triton.jit") == 1
    assert ".expand(shape).contiguous()" in source  # the (5, 1) operand


POOLS = [
    ("max1d-k3-s2-p1", "F.max_pool1d(x, 3, stride=2, padding=1)", (2, 3, 11)),
    ("avg1d-k4-s3-p2-nopadcount", "F.avg_pool1d(x, 4, stride=3, padding=2, count_include_pad=False)", (2, 3, 10)),
    ("max2d-rect-dil", "F.max_pool2d(x, (3, 2), stride=(2, 1), padding=(1, 1), dilation=(2, 1))", (2, 3, 9, 6)),
    ("avg2d-k3-s2-p1", "F.avg_pool2d(x, 3, stride=2, padding=1)", (2, 3, 7, 8)),
    ("avg2d-divisor", "F.avg_pool2d(x, 2, divisor_override=3)", (2, 3, 5, 7)),
    ("max3d-k2-p1-dil2", "F.max_pool3d(x, 2, stride=1, padding=1, dilation=2)", (2, 2, 4, 3, 5)),
    (
        "avg3d-rect-nopadcount",
        "F.avg_pool3d(x, (2, 3, 2), stride=(2, 1, 2), padding=(1, 1, 0), count_include_pad=False)",
        (2, 2, 5, 4, 6),
    ),
]


@pytest.mark.parametrize(("name", "expr", "shape"), POOLS, ids=[p[0] for p in POOLS])
def test_pool_matches_reference(tmp_path, writer, name, expr, shape):
    path = operator_file(tmp_path, "", "", f"return torch.tanh({expr}) * 3.0", [shape], [])
    source = check_candidate(writer, path, {"pool.BLOCK_SIZE": 128})
    helpers = sum(source.count(f"def {name}(") for name in JIT_HELPERS)  # _tanh's device helpers
    assert source.count("@triton.jit") - helpers == 1  # the activation and scale run in the pooling kernel


SIBLINGS = [
    (
        "max-dil-plus-avg-3d",
        "F.max_pool3d(x, 2, stride=2, padding=1, dilation=2) + F.avg_pool3d(x, 2, stride=2)",
        (2, 3, 4, 6, 4),
        2,
    ),
    (
        "three-pools-2d",
        "torch.relu(F.max_pool2d(x, 3, stride=2, padding=1) - F.avg_pool2d(x, 3, stride=2, padding=1, "
        "count_include_pad=False)) * F.avg_pool2d(x, (2, 3), stride=2, padding=(0, 1), divisor_override=3)",
        (2, 3, 6, 7),
        3,
    ),
    # pools of one input with different output shapes, and pools of different inputs, stay apart
    ("different-shapes", "F.max_pool2d(x, 2).sum() + F.avg_pool2d(x, 3).mean()", (2, 3, 6, 6), None),
    ("different-inputs", "F.max_pool2d(x, 2) + F.avg_pool2d(torch.relu(x) + 1.0, 2)", (2, 3, 6, 8), None),
]


@pytest.mark.parametrize(("name", "expr", "shape", "pools"), SIBLINGS, ids=[s[0] for s in SIBLINGS])
def test_pools_of_one_input_share_its_kernel(tmp_path, writer, name, expr, shape, pools):
    """Pools of the same tensor in memory with the same output shape run in one kernel, each over its own
    window in the same lane, with what combines them as the epilogue: the input is read by one kernel."""
    path = operator_file(tmp_path, "", "", f"return {expr}", [shape], [])
    source = check_candidate(writer, path, {"pool.BLOCK_SIZE": 128})
    if pools is not None:  # one kernel, one accumulator per pool
        assert source.count("@triton.jit") == 1 and source.count("= tl.full([BLOCK]") == pools
        unfused = check_candidate(writer, path, {"pool.BLOCK_SIZE": 128, "plan.fuse_epilogue": False})
        assert "acc_1" not in unfused and unfused.count("@triton.jit") > 1
    else:
        assert "acc_1" not in source


def test_conv_pointwise_pool_is_two_kernels(tmp_path, writer):
    path = operator_file(
        tmp_path,
        "",
        "self.conv = nn.Conv2d(3, 5, 3)",
        "return F.max_pool2d(torch.relu(self.conv(x) + 1.0), 2) * 0.5",
        [(2, 3, 8, 9)],
        [],
    )
    source = check_candidate(writer, path, SMALL)
    assert source.count("@triton.jit") == 4  # "auto": gemm, plane and direct conv kernels, one pooling kernel
    assert launched_kinds(source) == ["conv", "pool"]


@pytest.mark.parametrize(
    ("norm", "extra"),
    [
        ("nn.GroupNorm(2, 6)", ""),
        ("nn.BatchNorm2d(6)", ""),
        ("nn.InstanceNorm2d(6)", ""),
        ("nn.Identity()", ".mean(dim=1, keepdim=True)"),
        ("nn.Identity()", ".amax(dim=1)"),
    ],
    ids=["groupnorm", "batchnorm-eval", "instancenorm", "mean-over-channels", "max-over-channels"],
)
def test_norms_and_channel_reductions_after_a_conv(tmp_path, writer, norm, extra):
    path = operator_file(
        tmp_path,
        "",
        f"self.conv = nn.Conv2d(3, 6, 3, padding=1)\nself.norm = {norm}",
        f"return torch.relu(self.norm(self.conv(x)){extra})",
        [(2, 3, 5, 7)],
        [],
    )
    check_candidate(writer, path, SMALL)


CHANNEL_EPILOGUES = [
    ("mean-keepdim-tanh", "nn.Conv2d(3, 6, 3)", "torch.tanh(y.mean(dim=1, keepdim=True))", True),
    ("amax-nokeep", "nn.Conv2d(3, 5, 3, stride=2, padding=1)", "torch.amax(y, dim=1) * 2.0", True),
    ("softmax-channels", "nn.Conv2d(3, 6, 3, padding=1)", "torch.softmax(y * 0.5, dim=1)", True),
    ("sum-and-full-output", "nn.Conv1d(4, 6, 3)", "torch.relu(y) - y.sum(dim=1, keepdim=True)", True),
    ("transposed-3d-min", "nn.ConvTranspose3d(2, 3, 3, stride=2, padding=1)", "y.amin(dim=1) + 1.0", True),
    ("grouped-stays-apart", "nn.Conv2d(4, 6, 3, groups=2)", "y.mean(dim=1)", False),
    ("spatial-reduction-apart", "nn.Conv2d(3, 6, 3)", "y.sum(dim=(2, 3))", False),
]


@pytest.mark.parametrize(
    ("name", "module", "epilogue", "fused"), CHANNEL_EPILOGUES, ids=[c[0] for c in CHANNEL_EPILOGUES]
)
def test_reductions_over_the_channels_run_in_the_conv_epilogue(tmp_path, writer, name, module, epilogue, fused):
    """A conv (groups 1) whose channels fit one tile reduces over them in its GEMM epilogue: one tile spans
    every channel, the reduced values are stored per position (and broadcast back for softmax); the conv's
    output never goes through memory. Grouped convs and other reductions keep a second kernel."""
    d = module.count("3d") + module.count("2d") * 2 + module.count("1d") * 1
    shape = {1: (2, 4, 9), 2: (2, 3, 6, 7), 3: (2, 2, 2, 3, 2)}[d if "3d" not in module else 3]
    if "groups=2" in module:
        shape = (2, 4, 6, 7)
    path = operator_file(tmp_path, "", f"self.conv = {module}", f"y = self.conv(x)\nreturn {epilogue}", [shape], [])
    source = check_candidate(writer, path, {**SMALL, "conv.algo": "auto"})
    assert ("axis=0)[None, :]" in source and "bn = max(16, next_power_of_2(COG))" in source) is fused
    if fused:
        assert launched_kinds(source) == ["conv"] and "elif CIG == 1:" not in source  # the GEMM only


def test_channel_reduction_fusion_follows_the_epilogue_gene(tmp_path, writer):
    path = operator_file(
        tmp_path, "", "self.conv = nn.Conv2d(3, 6, 3, bias=False)", "return self.conv(x).sum(dim=1)", [(2, 3, 6, 7)], []
    )
    fused = check_candidate(writer, path, SMALL)
    unfused = check_candidate(writer, path, {**SMALL, "plan.fuse_epilogue": False})
    assert "axis=0)[None, :]" in fused and fused.count("@triton.jit") == 1
    assert "axis=0)[None, :]" not in unfused and launched_kinds(unfused) == ["conv", "col"]


COL_BROADCASTS = [
    # (id, forward, input shapes, how the broadcast operand is addressed)
    ("per-channel-weight-sum", "(x * self.w).sum(dim=1)", [(2, 6, 5, 7)], "strided"),
    ("per-sample-scale-mean-c-h", "(x * y).mean(dim=(1, 2))", [(2, 6, 5, 7), (2, 1, 1, 1)], "strided"),
    ("row-broadcast-amax", "(x + y).amax(dim=1)", [(2, 6, 5, 7), (1, 6, 1, 7)], "expanded"),
]


@pytest.mark.parametrize(("name", "forward", "shapes", "how"), COL_BROADCASTS, ids=[c[0] for c in COL_BROADCASTS])
def test_middle_dim_reductions_take_broadcast_operands(tmp_path, writer, name, forward, shapes, how):
    """A reduction over middle dims reads operands broadcast against its base (a per-channel weight, a
    per-sample scale) with one stride per (outer, reduced, inner) group, or expanded in the launcher when
    they span only part of a group; before, such an operator was unsupported."""
    path = operator_file(tmp_path, "", "self.w = nn.Parameter(torch.randn(6, 1, 1))", f"return {forward}", shapes, [])
    source = check_candidate(writer, path, {})
    assert source.count("@triton.jit") == 1 and launched_kinds(source) == ["col"]
    assert ("_so = group_step(" in source) == (how == "strided")
    assert (".expand(shape).contiguous()" in source) == (how == "expanded")


def test_unfused_conv_bias_then_channel_mean(tmp_path, writer):
    """With fusion off the bias add is a kernel of its own and the channel mean a column reduction over its
    result (the bias is a broadcast operand there when the plan folds it in): renders and matches."""
    forward = "return torch.tanh(self.conv(x).mean(dim=1))"
    path = operator_file(tmp_path, "", "self.conv = nn.Conv2d(3, 6, 3)", forward, [(2, 3, 6, 7)], [])
    source = check_candidate(writer, path, {**SMALL, "plan.fuse_epilogue": False})
    assert "axis=0)[None, :]" not in source and "col" in launched_kinds(source)


def test_a_channel_reduction_past_one_tile_is_a_clear_error(tmp_path, writer):
    """The planner fuses only convs whose channels fit one tile at every declared size; a launch with more
    (a size the operator never declared) fails with a message instead of a wrong result."""
    path = operator_file(
        tmp_path, "", "self.conv = nn.Conv2d(3, 6, 3)", "return self.conv(x).sum(dim=1)", [(2, 3, 6, 7)], []
    )
    loaded = load_operator(str(path))
    source = writer.render(loaded.spec, SMALL)
    candidate = import_source(path.with_name("cand_wide.py"), source)
    model = candidate.ModelNew()
    model.conv.weight = torch.nn.Parameter(torch.randn(200, 3, 3, 3))
    model.conv.bias = torch.nn.Parameter(torch.randn(200))
    with pytest.raises(ValueError, match="at most 128 channels"):
        model(torch.randn(1, 3, 6, 7))


@pytest.mark.parametrize("fuse", [True, False])
def test_unfused_epilogue_runs_as_pointwise_kernels(tmp_path, writer, fuse):
    path = operator_file(
        tmp_path, "", "self.conv = nn.Conv2d(3, 4, 3)", "return torch.sigmoid(self.conv(x)) * 2.0", [(2, 3, 6, 6)], []
    )
    source = check_candidate(writer, path, {**SMALL, "plan.fuse_epilogue": fuse})
    assert ("pointwise" in launched_kinds(source)) is not fuse


@pytest.mark.parametrize(
    ("module", "shape"),
    [
        ("nn.Conv2d(3, 5, 3, padding=1)", (2, 3, 5, 6)),
        ("nn.ConvTranspose2d(3, 4, 3, stride=2, padding=1, output_padding=1, groups=1)", (2, 3, 3, 4)),
        ("nn.Conv1d(4, 4, 3, groups=4)", (2, 4, 7)),
    ],
    ids=["conv2d", "conv-transpose2d", "depthwise1d"],
)
def test_library_convolution_in_hybrid_policy(tmp_path, module, shape):
    writer = TemplateWriter(policy="hybrid")
    path = operator_file(tmp_path, "", f"self.conv = {module}", "return F.gelu(self.conv(x)) + 1.0", [shape], [])
    source = check_candidate(writer, path, {"conv.library": True})
    assert "torch.convolution(" in source
    assert "_epilogue_fwd_kernel[" in source


def test_library_candidates_of_the_conv_examples_compile():
    """The library path's own names (the convolution's result, the epilogue kernel's source) never meet the
    operator's value names: a residual conv whose output is `y` once gave `y_ptr` twice (a SyntaxError)."""
    writer = TemplateWriter(policy="hybrid")
    convs = 0
    for path in sorted(EXAMPLES.glob("conv_*.py")):
        spec = load_operator(str(path)).spec
        if "conv" not in writer.kinds(writer.analysis(spec)):
            continue  # pooling only
        source = writer.render(spec, {"conv.library": True})
        compile(source, path.name, "exec")
        assert "torch.convolution(" in source, path.name
        convs += 1
    assert convs >= 5


def test_library_gene_exists_only_in_hybrid_policy(tmp_path):
    path = operator_file(
        tmp_path, "", "self.conv = nn.Conv2d(3, 5, 3)", "return torch.relu(self.conv(x))", [(1, 3, 5, 5)], []
    )
    strict, hybrid = TemplateWriter(), TemplateWriter(policy="hybrid")
    spec = load_operator(str(path)).spec
    assert "conv.library" not in strict.space(strict.analysis(spec))
    assert "conv.library" in hybrid.space(hybrid.analysis(spec))
    with pytest.raises(ValueError, match="hybrid"):
        strict.render(spec, {"conv.library": True})
    with pytest.raises(ValueError, match="policy"):
        TemplateWriter(policy="loose")


def test_repair_keeps_conv_tiles_in_budget():
    g = G.repair(
        {
            "conv.BLOCK_M": 256,
            "conv.BLOCK_N": 128,
            "conv.BLOCK_K": 64,
            "conv.num_stages": 4,
            "conv.num_warps": 2,
            "conv.precision": "tf32x3",
        }
    )
    assert (g["conv.BLOCK_M"] + g["conv.BLOCK_N"]) * g["conv.BLOCK_K"] * 4 * g[
        "conv.num_stages"
    ] <= G.SHARED_MEMORY_BYTES
    assert g["conv.BLOCK_M"] * g["conv.BLOCK_N"] <= 2048 * g["conv.num_warps"]
    assert (g["conv.BLOCK_M"], g["conv.BLOCK_N"], g["conv.num_warps"]) == (128, 128, 8)
    # the 128 x 128 tile over 8 warps stays (the fastest on the H200), over 4 it shrinks
    assert G.repair({**g, "conv.BLOCK_M": 128})["conv.BLOCK_M"] == 128
    assert G.repair({**g, "conv.BLOCK_M": 128, "conv.num_warps": 4})["conv.num_warps"] == 8
    assert G.allowed("conv.precision", "fp32") == ("ieee", "tf32x3")


PROLOGUES = [
    ("affine-maxpool-padded", (2, 3, 7, 6), "F.max_pool2d(x * self.w - 3.0, 3, stride=2, padding=1)", True),
    ("bn-relu-avgpool", (2, 3, 6, 8), "F.avg_pool2d(torch.relu(self.bn(x)), 2)", True),
    ("two-inputs-maxpool1d", (2, 3, 9), "F.max_pool1d(torch.tanh(x + y), 3, stride=2, padding=1)", True),
    ("shared-value-not-fused", (2, 3, 6, 6), "F.max_pool2d(r := torch.relu(x), 2).sum() + r.mean()", False),
]


@pytest.mark.parametrize(("name", "shape", "expr", "fused"), PROLOGUES, ids=[p[0] for p in PROLOGUES])
def test_pointwise_before_a_pool_runs_per_tap_inside_it(tmp_path, writer, name, shape, expr, fused):
    """The pooled tensor never goes through memory: the pool kernel computes its prologue per tap (padded
    taps masked after it). Not when another op also reads the prologue's values, nor with fusion off."""
    shapes = [shape] * (2 if "y" in expr else 1)
    init = "self.w = nn.Parameter(torch.ones(3, 1, 1))\nself.bn = nn.BatchNorm2d(3)"
    path = operator_file(tmp_path, "", init, f"return {expr}", shapes, [])
    source = check_candidate(writer, path, {"pool.BLOCK_SIZE": 128})
    assert ("sp = " in source) is fused  # the prologue reads its operands at the tap's input position
    unfused = check_candidate(writer, path, {"pool.BLOCK_SIZE": 128, "plan.fuse_epilogue": False})
    assert "sp = " not in unfused


def test_library_convolution_adds_its_bias_and_skips_an_empty_epilogue(tmp_path):
    """Hybrid: the bias goes into the library call; when nothing else follows in the conv's step (a norm
    kernel reads its output) no copy kernel runs, but a lone conv + bias still launches one Triton kernel."""
    writer = TemplateWriter(policy="hybrid")
    norm = operator_file(
        tmp_path,
        "",
        "self.conv = nn.Conv2d(3, 6, 3)\nself.norm = nn.GroupNorm(2, 6)",
        "return self.norm(self.conv(x))",
        [(2, 3, 6, 7)],
        [],
    )
    source = check_candidate(writer, norm, {"conv.library": True})
    assert ".reshape(-1), [1, 1]" in source and "_epilogue_fwd_kernel" not in source
    (tmp_path / "lone").mkdir()
    lone = operator_file(
        tmp_path / "lone", "", "self.conv = nn.Conv1d(3, 4, 3)", "return self.conv(x)", [(2, 3, 9)], []
    )
    source = check_candidate(writer, lone, {"conv.library": True})
    assert "_epilogue_fwd_kernel[" in source and "the bias was added by the library convolution" in source
