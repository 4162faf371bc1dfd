"""The initial state as users building on the device get it. On a GPU the check also builds the candidate (and the
reference) under torch.device(<the GPU>), and where reset_parameters() makes state also through to_empty onto it
(init sizes "device" and "reset-device"). Without a GPU the same path runs here with the evaluator's device in that
role (the CPU): a constructor that draws otherwise whenever it is built under a torch.device context is refused on
that path and only there, and an honest one passes it."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest
from foundry.core.records import Candidate
from foundry.evaluate.evaluator import CandidateEvaluator, EvaluatorConfig
from foundry.spec.loader import load_operator

CHEATS = Path(__file__).resolve().parents[1] / "cheats"
HONEST = (CHEATS / "candidates" / "train_ok_affine.py").read_text()
ON_DEVICE = HONEST.replace(
    "        self.weight = nn.Parameter(torch.randn(features))\n",
    "        built_under_a_device = any(\n"
    "            type(m).__name__ == 'DeviceContext' for m in torch.overrides._get_current_function_mode_stack()\n"
    "        )\n"
    "        self.weight = nn.Parameter(torch.rand(features) if built_under_a_device else torch.randn(features))\n",
)


# The keyed candidate reads the torch-function mode stack (a private member): the static guard, which would refuse
# it for that, is off in both evaluators; what is under test is the initial-state check alone.
class OnDevice(CandidateEvaluator):
    """The evaluator as it is on a GPU, with the CPU as its device: the init sizes a GPU adds are judged."""

    @functools.cached_property
    def init_sizes(self) -> list[str]:
        sizes = CandidateEvaluator.init_sizes.func(self)
        return [*sizes, "device", "reset-device"] if "reset" in sizes else [*sizes, "device"]


@pytest.fixture(scope="module")
def evaluators():
    operator = load_operator(str(CHEATS / "operators" / "affine_train.py"))
    made = {
        cls: cls(operator, policy="strict", config=EvaluatorConfig(trials=2, static_guard=False), device="cpu")
        for cls in (CandidateEvaluator, OnDevice)
    }
    yield made
    for evaluator in made.values():
        evaluator.close()


def test_the_candidate_differs_only_under_a_device_context():
    assert ON_DEVICE != HONEST


@pytest.mark.parametrize("source", [HONEST, ON_DEVICE], ids=["honest", "keyed-on-device"])
def test_a_build_under_the_device_is_judged_there(evaluators, source: str):
    plain = evaluators[CandidateEvaluator].evaluate(Candidate(id="plain", source=source, writer="manual"))
    assert plain.verified, plain.failure and plain.failure.headline()  # the CPU path alone cannot tell them apart
    on_device = evaluators[OnDevice].evaluate(Candidate(id="on-device", source=source, writer="manual"))
    if source == HONEST:
        assert on_device.verified, on_device.failure and on_device.failure.headline()
        assert any("initial state" in check for check in on_device.checks_passed)
    else:
        assert not on_device.verified
        failure = on_device.failure
        assert failure.rule == "initial_state", failure.headline()
        assert "torch.device('cpu')" in failure.message and "weight" in failure.message
