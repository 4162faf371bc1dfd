"""The check looks like use: no trial input exists for candidate code before its calls, no global flag marks a
checked call, the module's name is not known in advance, inputs are transformed within the operator's domain
and laid out non-contiguously, the parameters change in place, and an inner dimension varies. Unit tests of
the pieces; the attacks that each closes are in tests/cheats/candidates/use_*.py."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch
from foundry.evaluate import jobfiles
from foundry.evaluate.correctness import Tolerance, strengthened, unusable
from foundry.evaluate.evaluator import CandidateEvaluator, EvaluatorConfig, strided
from foundry.evaluate.exchange import call_plan, grad_enabled
from foundry.evaluate.runtime_guard import LaunchRecorder, OpLog
from foundry.evaluate.worker import layout_copy, poison_mode, set_state
from foundry.spec.loader import load_operator

OPERATORS = Path(__file__).resolve().parents[1] / "cheats" / "operators"


def evaluator(tmp_path: Path, source: str) -> CandidateEvaluator:
    path = tmp_path / "op.py"
    path.write_text(source)
    return CandidateEvaluator(load_operator(str(path)), config=EvaluatorConfig(trials=1), device="cpu")


# -- no trial data before the calls ------------------------------------------------------------------


def test_the_trials_file_is_written_past_a_planted_link_and_removed_once_read(tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("evaluator's file")
    job = tmp_path / "job"
    job.mkdir()
    (job / jobfiles.TRIALS).symlink_to(outside)  # planted by candidate code before the evaluator writes
    jobfiles.write_trials({"trials": [[torch.ones(3)]], "reweighted": None}, job)
    assert outside.read_text() == "evaluator's file"
    assert not (job / jobfiles.TRIALS).is_symlink()
    sent = jobfiles.take_trials(job)
    assert torch.equal(sent["trials"][0][0], torch.ones(3))
    assert not (job / jobfiles.TRIALS).exists() and os.listdir(job) == []


def test_the_job_file_holds_no_trial_and_job_json_only_shapes(tmp_path):
    ev = evaluator(tmp_path, (OPERATORS / "softmax_rows.py").read_text())
    prepared = ev.prepare()
    assert set(prepared.payload) == {"init", "state"}
    assert len(prepared.sent["trials"]) == len(prepared.refs) == len(prepared.described)
    x = prepared.sent["trials"][0][0]
    described = prepared.described[0]
    assert described == [{"shape": list(x.shape), "stride": list(x.stride()), "dtype": "float32"}]
    meta = jobfiles.meta_inputs(described)
    assert meta is not None and meta[0].device.type == "meta" and meta[0].shape == x.shape
    assert jobfiles.describe_inputs([2, 0.5, None])[1] == {"unknown": "float"}  # a float's value is not sent
    assert jobfiles.meta_inputs([{"unknown": "float"}]) is None


# -- nothing marks a checked call --------------------------------------------------------------------


def test_each_load_names_the_module_anew(tmp_path):
    path = str(tmp_path / "candidate.py")
    names = {jobfiles.load_candidate("NAME = __name__\n", path).NAME for _ in range(3)}
    assert len(names) == 3 and "foundry_candidate" not in names


def test_call_plan_ends_with_the_reweighted_and_reassigned_calls_and_alternates_grad():
    assert call_plan(2, 5, reweighted=True) == [
        ("trial", 0),
        ("trial", 1),
        ("rewrite", 0),
        ("trial", 2),
        ("trial", 3),
        ("repeat", 0),
        ("moved", 0),
        ("fresh", 1),
        ("reweighted", 4),
        ("reassigned", 0),
    ]
    flags = [grad_enabled(c) for c in range(len(call_plan(2, 5, reweighted=True)))]
    assert any(flags) and not all(flags)


def test_allocations_are_poisoned_without_global_flags_and_the_fill_is_not_logged():
    recorder = LaunchRecorder()
    poison = poison_mode(torch)
    log = OpLog(recorder)
    with log, poison:
        floats = torch.empty(5)
        ints = torch.empty_like(torch.zeros(3, dtype=torch.int32))
        written = torch.zeros(2)
    assert not torch.are_deterministic_algorithms_enabled()
    assert torch.isnan(floats).all() and (ints == torch.iinfo(torch.int32).max).all()
    assert torch.equal(written, torch.zeros(2))
    logged = " ".join(log.ops)
    assert "empty" in logged and "fill_" not in logged


# -- inputs as use has them ----------------------------------------------------------------------------


def test_strided_views_keep_values_and_the_worker_keeps_their_layout():
    torch.manual_seed(0)
    seen = set()
    for x, family in [
        (x, f) for x in (torch.randn(3, 4), torch.randn(7), torch.randn(3, 2, 5)) for f in ("transposed", "split")
    ] * 6:
        view = strided(x, family)
        assert not view.is_contiguous() and torch.equal(view, x)
        seen.add((x.dim(), view.stride(), view.storage_offset()))
        copy = layout_copy(view, "cpu", torch)
        assert copy.stride() == view.stride() and torch.equal(copy, x)
        assert copy.untyped_storage().data_ptr() != view.untyped_storage().data_ptr()
    assert (2, (1, 3), 0) in seen and (2, (12, 1), 4) in seen  # transposed, rows of a split (qkv[..., n:2n])
    assert (3, (5, 15, 1), 0) in seen and (1, (2,), 0) in seen  # first two dims swapped, every other element


RELU_NONNEG = """
import torch
from torch import nn

class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)

def get_inputs():
    return [torch.rand(4, 6)]

def get_init_inputs():
    return []
"""

LOG = RELU_NONNEG.replace("torch.relu(x)", "torch.log(x)")


def test_transformed_trials_flip_signs_where_the_reference_accepts_it(tmp_path):
    ev = evaluator(tmp_path, RELU_NONNEG)
    model = ev.operator.build(True)
    x = torch.rand(4, 6) + 0.1
    found = {note: inputs[0] for note, inputs, _ in ev.transformed(model, [x])}
    flipped = found["signs flipped, non-contiguous"]
    assert not flipped.is_contiguous() and (flipped < 0).any() and (flipped > 0).any()
    assert torch.equal(flipped.abs(), x)
    assert {"inputs offset", "rows of input 0 scaled apart"} <= set(found)
    factors = sorted(float(note.removeprefix("inputs x")) for note in found if note.startswith("inputs x"))
    assert len(factors) == 3  # fp32: small, wider, large
    small, wider, large = factors
    assert 10**-3.5 <= small <= 1e-3 and 16 * 10**-0.2 <= wider <= 16 * 10**0.1 and 1e3 <= large <= 10**3.5
    for note, factor in ((n, float(n.removeprefix("inputs x"))) for n in found if n.startswith("inputs x")):
        torch.testing.assert_close(found[note], x * factor, rtol=1e-2, atol=0)  # the note names the factor used


def test_scaled_trials_move_their_factors_and_rows_apart_each_get_their_own(tmp_path):
    """The scale factors are secret within their bands (two evaluations draw different ones), and the rows of the
    rows-apart trial differ in size by more than any one factor could explain: no row statistic matches a known
    factor."""
    ev = evaluator(tmp_path, RELU_NONNEG)
    model = ev.operator.build(True)
    x = torch.rand(64, 6) + 0.1
    first = {note for note, _, _ in ev.transformed(model, [x]) if note.startswith("inputs x")}
    second = {note for note, _, _ in ev.transformed(model, [x]) if note.startswith("inputs x")}
    assert first != second
    x = torch.randn(64, 400)
    rows = {note: inputs[0] for note, inputs, _ in ev.transformed(model, [x])}["rows of input 0 scaled apart"]
    sizes = (rows.double().pow(2).mean(1).sqrt() / x.double().pow(2).mean(1).sqrt()).log10()  # a size per row
    assert sizes.max() - sizes.min() > 1.0 and len({round(float(s), 3) for s in sizes}) > 60
    centered = rows.double() - rows.double().mean(1, keepdim=True)
    kurtosis = centered.pow(4).mean(1) / centered.pow(2).mean(1).pow(2)
    assert float(kurtosis.min()) < 4 and float(kurtosis.max()) > 8  # rows near normal and rows heavy-tailed
    assert torch.equal(torch.sign(rows), torch.sign(x))  # sizes move, signs stay


def test_transformed_trials_leave_out_inputs_outside_the_domain(tmp_path):
    ev = evaluator(tmp_path, LOG)
    x = torch.rand(4, 6) + 0.1
    notes = [note for note, _, _ in ev.transformed(ev.operator.build(True), [x])]
    assert "inputs non-contiguous" in notes  # log of a negative number is NaN: no flipped signs
    assert not any("flipped" in n for n in notes)
    assert "ties: values on a grid" in notes  # log(0) is -inf: no zeros, but repeated values
    assert not any("zero" in n or "inf" in n for n in notes)


SOFTMAX = RELU_NONNEG.replace("torch.relu(x)", "torch.softmax(x, dim=-1)")


def test_special_value_trials_hold_zeros_ties_a_constant_row_and_minus_inf(tmp_path):
    ev = evaluator(tmp_path, SOFTMAX)
    x = torch.randn(6, 8)
    found = {note: inputs[0] for note, inputs, _ in ev.transformed(ev.operator.build(True), [x])}
    special = found["special values: ties, exact zeros, a zero row, a constant row"]
    assert bool((special[0] == 0).all()) and bool((special[1] == special[1, 0]).all()) and special[1, 0] != 0
    assert int((special == 0).sum()) > 8  # zeros beyond the zero row
    assert special[2:].unique().numel() < special[2:].numel()  # ties
    masked = found["-inf entries"]
    # scattered, and in leading and trailing runs (left padding, a sliding window); no row all -inf
    rows = masked.reshape(-1, masked.shape[-1])
    assert bool(torch.isinf(masked).any()) and bool(torch.isfinite(rows).any(dim=-1).all())
    assert bool(torch.isfinite(torch.softmax(masked, dim=-1)).all())


def test_minus_inf_entries_are_left_out_where_the_reference_output_is_not_finite(tmp_path):
    ev = evaluator(tmp_path, RELU_NONNEG.replace("torch.relu(x)", "x * 2"))
    notes = [note for note, _, _ in ev.transformed(ev.operator.build(True), [torch.randn(6, 8)])]
    assert notes[0].startswith("special values") and "-inf entries" not in notes


def test_unusable_reference_outputs():
    assert unusable([torch.tensor([1.0, float("inf")])]) == "output 0 is not finite"
    assert unusable([torch.zeros(4)]) == "output 0 holds one value everywhere"
    assert unusable([torch.tensor(3.0)]) is None  # a scalar is one value, and usable
    assert unusable([torch.arange(3.0), torch.zeros(2, dtype=torch.int64)]) is None


def test_a_transformed_trial_is_judged_relative_to_its_own_outputs():
    tol = Tolerance(1e-4, 1e-4)
    small = strengthened(torch.full((8,), 1e-3), tol, 0.01)
    assert small.atol == pytest.approx(1e-5)
    assert strengthened(torch.full((8,), 10.0), tol, 0.01) == tol


# -- weights and shapes as use has them ------------------------------------------------------------


def test_the_last_trial_runs_with_parameters_changed_in_place(tmp_path):
    ev = evaluator(tmp_path, (OPERATORS / "linear_small.py").read_text())
    prepared = ev.prepare()
    assert prepared.reweighted and prepared.notes[-1] == "parameters changed in place"
    moved = prepared.sent["reweighted"]
    assert set(moved) == set(prepared.payload["state"])
    assert not torch.equal(moved["linear.weight"], prepared.payload["state"]["linear.weight"])
    model = ev.operator.build(True)
    model.load_state_dict(moved)
    x = prepared.sent["trials"][-1][0]
    with torch.no_grad():
        torch.testing.assert_close(model(x), prepared.refs[-1][0])
    weight = model.linear.weight
    before = set_state(model, prepared.payload["state"], torch)
    assert model.linear.weight is weight  # in place: the same tensor
    assert torch.equal(before["linear.weight"], moved["linear.weight"])


def test_the_reweighted_call_draws_parameters_outside_the_init_range_and_is_judged_on_its_own_outputs(tmp_path):
    ev = evaluator(tmp_path, (OPERATORS / "linear_small.py").read_text())
    prepared = ev.prepare()
    before, moved = prepared.payload["state"], prepared.sent["reweighted"]
    ratio = moved["linear.weight"].abs().mean() / before["linear.weight"].abs().mean()
    assert 5 < float(ratio) < 20  # x10 (every other parameter x0.01), beyond perturbation
    assert bool((torch.sign(moved["linear.weight"]) != torch.sign(before["linear.weight"])).any())
    assert len(prepared.refs) - 1 in prepared.tolerances


def test_redraw_scales_and_flips_parameters_but_not_buffers():
    from foundry.evaluate.evaluator import redraw_

    model = torch.nn.BatchNorm1d(64)
    model.weight.data.fill_(1.0)
    model.bias.data.fill_(1.0)
    redraw_(model, torch.Generator().manual_seed(0))
    assert torch.equal(model.weight.abs(), torch.full((64,), 10.0))
    assert torch.allclose(model.bias.abs(), torch.full((64,), 0.01))
    assert bool((model.weight < 0).any()) and bool((model.weight > 0).any())
    assert torch.equal(model.running_var, torch.ones(64))


def test_an_operator_with_parameters_gets_a_non_square_variant(tmp_path):
    ev = evaluator(tmp_path, (OPERATORS / "shuffle_scale.py").read_text())
    model = ev.operator.build(True)
    variants = ev.auto_variants(model, [torch.randn(2, 4, 5, 5)])
    shapes = [tuple(v[0].shape) for v in variants]
    assert (2, 4, 4, 5) in shapes  # the channel dimension is tied to the parameters: the height varies
    assert (1, 4, 5, 5) in shapes and (5, 4, 5, 5) in shapes


def test_a_dict_read_but_not_changed_keeps_its_fingerprint():
    from foundry.evaluate.worker import fingerprint

    config = {"BLOCK": 128, "num_warps": 4}
    before = fingerprint(config)
    [config["BLOCK"] for _ in range(100)]  # reads make fresh item tuples, whose identities differ
    assert fingerprint(config) == before
    config["BLOCK"] = 256
    assert fingerprint(config) != before
    config["BLOCK"] = 128
    config["extra"] = 1
    assert fingerprint(config) != before


def test_edge_variants_have_batch_one_many_rows_and_padded_rows(tmp_path):
    ev = evaluator(tmp_path, SOFTMAX)
    x = torch.randn(6, 5)
    variants = [v[0] for v in ev.edge_variants(ev.operator.build(True), [x])]
    shapes = [tuple(v.shape) for v in variants]
    assert (1, 5) in shapes and (601, 5) in shapes  # past a grid capped at 512 rows
    padded = next(v for v in variants if not v.is_contiguous())
    assert padded.shape == x.shape and padded.stride() == (10, 1) and torch.equal(padded, x)


def test_edge_variants_stay_under_the_element_cap(tmp_path):
    ev = evaluator(tmp_path, SOFTMAX)
    shapes = [tuple(v[0].shape) for v in ev.edge_variants(ev.operator.build(True), [torch.randn(4, 512)])]
    assert (1, 512) in shapes and (64, 512) in shapes  # the aligned batch fits
    assert not any(s[0] > 64 for s in shapes)  # 601 x 512 is past EDGE_ELEMENTS


# -- calls as modules are used: train mode, inputs that require grad -----------------------------------


def test_use_modes_allow_train_mode_and_grad_inputs_only_where_the_reference_ignores_them(tmp_path):
    ev = evaluator(tmp_path, SOFTMAX)
    x = torch.randn(4, 6)
    model = ev.operator.build(True).eval()
    assert ev.use_modes(model, [x], [torch.softmax(x, -1)]) == {"train": True, "requires_grad": True}
    dropout = evaluator(tmp_path, RELU_NONNEG.replace("torch.relu(x)", "nn.functional.dropout(x, 0.5, self.training)"))
    model = dropout.operator.build(True).eval()
    assert dropout.use_modes(model, [x], [x]) == {"train": False, "requires_grad": True}
    in_place = evaluator(tmp_path, RELU_NONNEG.replace("torch.relu(x)", "x.relu_()"))  # a leaf that requires grad
    model = in_place.operator.build(True).eval()
    assert in_place.use_modes(model, [x], [x.relu()]) == {"train": True, "requires_grad": False}


def test_prepared_jobs_carry_the_modes(tmp_path):
    prepared = evaluator(tmp_path, SOFTMAX).prepare()
    assert prepared.modes == {"train": True, "requires_grad": True}


def test_state_check_sees_method_defaults_and_rebound_scalars():
    import types

    from foundry.evaluate.worker import changed_containers, fingerprint, state_containers

    module = types.ModuleType("cand")
    exec(  # noqa: S102 (a candidate module of our own)
        "from torch import nn\n"
        "LIMIT = 3\n"
        "class ModelNew(nn.Module):\n"
        "    calls = 0\n"
        "    def forward(self, x, seen=[0]):\n"
        "        return x\n",
        module.__dict__,
    )
    model = module.ModelNew()
    model.steps = 0
    before = {name: fingerprint(c) for name, c in state_containers(module, model, torch).items()}
    assert changed_containers(before, state_containers(module, model, torch)) == []
    model.train()  # the worker sets the mode: not state
    assert changed_containers(before, state_containers(module, model, torch)) == []
    module.ModelNew.forward.__defaults__[0][0] += 1
    module.ModelNew.calls = module.ModelNew.calls + 1
    model.steps = 1
    module.LIMIT = 4
    changed = changed_containers(before, state_containers(module, model, torch))
    assert changed == ["module.LIMIT", "module.ModelNew.calls", "module.ModelNew.forward default 0", "steps"]


# -- the hybrid grant is bounded by the reference's own library work -------------------------------------

CONV = """
import torch
from torch import nn

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 2, 3, padding=1)

    def forward(self, x):
        return self.conv(x)

def get_inputs():
    return [torch.randn(1, 2, 5, 5)]

def get_init_inputs():
    return []
"""


def test_a_granted_library_op_is_bounded_by_how_often_the_reference_runs_it(tmp_path):
    path = tmp_path / "op.py"
    path.write_text(CONV)
    ev = CandidateEvaluator(load_operator(str(path)), policy="hybrid", config=EvaluatorConfig(trials=1), device="cpu")
    ev.prepare().close()
    granted = "convolution[2x2x3x3/1]"  # the reference's configuration: weight shape and groups
    assert ev.reference_counts.get(granted) == 1 and granted in ev.library_ops
    assert ev.beyond_reference({"aten.convolution.default[2x2x3x3/1]": 1}) == ""
    assert ev.beyond_reference({"aten.convolution.default[2x2x3x3/1]": 2}) == f"{granted}×2 (reference ×1)"
    assert not ev.granted("convolution[4x2x3x3/1]")  # another configuration (twice the channels) is not granted


def test_whole_number_trials_and_an_aligned_batch_are_drawn(tmp_path):
    """Whole numbers from 0 to 255 (pixels, counts) where the reference accepts them, else the values rounded to
    whole numbers; and an edge variant whose rows are a multiple of ALIGNED_ROWS (every row tile's)."""
    from foundry.evaluate.evaluator import ALIGNED_ROWS

    ev = evaluator(tmp_path, SOFTMAX)
    x = torch.randn(6, 8)
    model = ev.operator.build(True)
    found = {note: inputs[0] for note, inputs, _ in ev.transformed(model, [x])}
    pixels = found["whole numbers 0 to 255"]
    assert bool((pixels == pixels.round()).all()) and 0 <= float(pixels.min()) and float(pixels.max()) <= 255
    assert pixels.unique().numel() > 8
    (tmp_path / "log").mkdir()
    ev_log = evaluator(tmp_path / "log", LOG)
    notes = [note for note, _, _ in ev_log.transformed(ev_log.operator.build(True), [torch.rand(6, 8) + 0.1])]
    assert sum(n.startswith("whole numbers") for n in notes) == 1  # one form of the group: the first accepted
    batches = [v[0].shape[0] for v in ev.edge_variants(model, [x])]
    assert ALIGNED_ROWS in batches and 1 in batches  # one row per batch element: 64 of them


def test_the_state_scan_enters_other_libraries_objects_but_not_triton_kernels():
    """worker.reachable: a tensor held in a triton.Config at module level and a tl.constexpr's value are state; a
    Triton kernel's own caches are not."""
    import types

    import triton
    import triton.language as tl
    from foundry.evaluate.worker import reachable

    @triton.jit
    def kernel(x_ptr):
        tl.store(x_ptr, 1.0)

    module = types.ModuleType("candidate_module")
    module.STASH = triton.Config({"tally": torch.zeros(4)})
    module.LIMIT = tl.constexpr(64)
    module.kernel = kernel
    tensors, held = reachable(module, torch.nn.Linear(2, 2), torch)
    assert "module.STASH.kwargs['tally']" in tensors
    assert held["module.LIMIT.value"] == 64
    assert not any(name.startswith("module.kernel") for name in [*tensors, *held])
