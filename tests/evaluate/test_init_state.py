"""The initial-state check of training operators: a candidate's constructor must make parameters and buffers as the
reference's initialisers do (the same constants, the same distributions), judged over several builds."""

from __future__ import annotations

import torch
from foundry.evaluate import init_state
from foundry.evaluate.init_state import INIT_DRAWS, initial_state, ks_limit, ks_statistic
from foundry.evaluate.worker import initial_states
from torch import nn


class Reference(nn.Module):
    def __init__(self, d_in: int = 24, d_out: int = 20):
        super().__init__()
        self.fc = nn.Linear(d_in, d_out)
        self.norm = nn.BatchNorm1d(d_out)


def builds(make, n: int = INIT_DRAWS) -> list[dict[str, torch.Tensor]]:
    return [make().state_dict() for _ in range(n)]


def reported(make, limit: int = init_state.INIT_SAMPLE) -> dict:
    return initial_states(builds(make), limit, torch)


def test_the_same_initialisers_in_another_module_pass():
    torch.manual_seed(0)

    class Same(nn.Module):  # its own parameters, drawn as nn.Linear draws them, in another order
        def __init__(self):
            super().__init__()
            self.norm = nn.BatchNorm1d(20)
            self.fc = nn.Module()
            bound = 1 / 24**0.5
            self.fc.bias = nn.Parameter(torch.empty(20).uniform_(-bound, bound))
            self.fc.weight = nn.Parameter(torch.empty(20, 24).uniform_(-bound, bound))

    assert initial_state(builds(Reference), reported(Same)) is None
    assert initial_state(builds(Reference), reported(Reference)) is None


def test_another_distribution_or_constant_is_refused_naming_the_key():
    torch.manual_seed(1)

    class Randn(Reference):
        def __init__(self):
            super().__init__()
            self.fc.weight.data = torch.randn(20, 24)

    refused = initial_state(builds(Reference), reported(Randn))
    assert refused is not None and refused.rule == "initial_state" and "fc.weight" in refused.message

    class ZeroBias(Reference):
        def __init__(self):
            super().__init__()
            self.fc.bias.data.zero_()

    refused = initial_state(builds(Reference), reported(ZeroBias))
    assert refused is not None and "fc.bias" in refused.message

    class RunningVarZero(Reference):  # a deterministic buffer with other values
        def __init__(self):
            super().__init__()
            self.norm.running_var.zero_()

    refused = initial_state(builds(Reference), reported(RunningVarZero))
    assert refused is not None and "norm.running_var" in refused.message and "every time" in refused.message


def test_uninitialised_memory_is_refused():
    torch.manual_seed(2)

    class Empty(Reference):
        def __init__(self):
            super().__init__()
            self.fc.weight.data = torch.full((20, 24), float("nan"))

    refused = initial_state(builds(Reference), reported(Empty))
    assert refused is not None and "non-finite" in refused.message


def test_a_report_that_is_not_a_sample_is_refused():
    torch.manual_seed(3)
    good = reported(Reference)
    assert initial_state(builds(Reference), None).rule == "initial_state"
    assert initial_state(builds(Reference), {"indices": good["indices"], "draws": good["draws"][:2]}) is not None
    repeated = {"indices": dict(good["indices"]), "draws": good["draws"]}
    repeated["indices"]["fc.weight"] = torch.zeros_like(good["indices"]["fc.weight"])  # one position many times
    assert "not a sample" in initial_state(builds(Reference), repeated).message


def test_large_tensors_are_sampled_and_still_judged():
    torch.manual_seed(4)
    limit = 64  # fc.weight has 480 elements: 64 of them per build
    report = initial_states(builds(Reference), limit, torch)
    assert report["indices"]["fc.weight"].numel() == limit and report["draws"][0]["fc.weight"].numel() == limit
    old = init_state.INIT_SAMPLE
    init_state.INIT_SAMPLE = limit
    try:
        assert initial_state(builds(Reference), report) is None

        class Wider(Reference):
            def __init__(self):
                super().__init__()
                nn.init.uniform_(self.fc.weight, -0.5, 0.5)  # 2.4 times nn.Linear's bound

        assert initial_state(builds(Reference), initial_states(builds(Wider), limit, torch)) is not None
    finally:
        init_state.INIT_SAMPLE = old


def test_the_ks_limit_holds_one_distribution_and_not_two():
    g = torch.Generator().manual_seed(5)
    a, b = torch.randn(4000, generator=g), torch.randn(4000, generator=g)
    assert ks_statistic(a, b) < ks_limit(4000, 4000)
    assert ks_statistic(a, b * 1.2) > ks_limit(4000, 4000)


def test_instances_that_all_start_alike_are_refused():
    torch.manual_seed(6)
    fixed = torch.empty(20, 24).uniform_(-(24**-0.5), 24**-0.5)

    class FixedSeed(Reference):  # the right distribution, the same values in every instance
        def __init__(self):
            super().__init__()
            self.fc.weight.data = fixed.clone()

    refused = initial_state(builds(Reference), reported(FixedSeed))
    assert refused is not None and "fc.weight" in refused.message and "between builds" in refused.message


def test_an_honest_draw_laid_out_in_order_is_refused():
    torch.manual_seed(7)

    class Sorted(Reference):  # nn.Linear's own draw, sorted and written column by column: rows nearly alike
        def __init__(self):
            super().__init__()
            values = torch.sort(self.fc.weight.data.reshape(-1))[0]
            self.fc.weight.data = values.reshape(24, 20).t().contiguous()

    refused = initial_state(builds(Reference), reported(Sorted))
    assert refused is not None and "fc.weight" in refused.message and "neighbours" in refused.message

    class RowsAlike(Reference):  # a fresh draw per build, the same in every row: symmetry never broken
        def __init__(self):
            super().__init__()
            row = torch.empty(24).uniform_(-(24**-0.5), 24**-0.5)
            self.fc.weight.data = row.repeat(20, 1)

    refused = initial_state(builds(Reference), reported(RowsAlike))
    assert refused is not None and "neighbours along dimension 0" in refused.message


def test_a_low_rank_start_with_honest_entries_is_refused():
    torch.manual_seed(8)

    class RankThree(Reference):  # each entry uniform on the right range, the matrix of rank 3
        def __init__(self):
            super().__init__()
            u = torch.nn.functional.normalize(torch.randn(20, 3), dim=1)
            v = torch.nn.functional.normalize(torch.randn(24, 3), dim=1)
            self.fc.weight.data = (u @ v.t()).clamp(-1, 1) * 24**-0.5  # cos of unit vectors in R^3: uniform

    refused = initial_state(builds(Reference), reported(RankThree))
    assert refused is not None and "fc.weight" in refused.message and "singular values" in refused.message


def test_a_branch_that_starts_as_a_copy_of_another_is_refused():
    torch.manual_seed(9)

    class TwoBranch(nn.Module):  # two branches of one shape, each nn.Linear's own draw
        def __init__(self):
            super().__init__()
            self.a = nn.Linear(24, 20)
            self.b = nn.Linear(24, 20)

    assert initial_state(builds(TwoBranch), reported(TwoBranch)) is None

    class Tied(TwoBranch):  # every key an honest draw on its own; b a copy of a: the branches never separate
        def __init__(self):
            super().__init__()
            self.b.weight.data = self.a.weight.data.clone()
            self.b.bias.data = self.a.bias.data.clone()

    refused = initial_state(builds(TwoBranch), reported(Tied))
    assert refused is not None and refused.rule == "initial_state"
    assert "a.weight" in refused.message and "b.weight" in refused.message and "related" in refused.message

    # the reverse: a reference whose branches start tied, and a candidate whose branches are independent
    refused = initial_state(builds(Tied), reported(TwoBranch))
    assert refused is not None and "a.weight" in refused.message and "b.weight" in refused.message

    old = init_state.INIT_SAMPLE  # sampled, not sent whole: judged at the positions the two samples share
    init_state.INIT_SAMPLE = 256  # 256 of 480 positions per key: about 136 in common
    try:
        assert initial_state(builds(TwoBranch), initial_states(builds(TwoBranch), 256, torch)) is None
        refused = initial_state(builds(TwoBranch), initial_states(builds(Tied), 256, torch))
        assert refused is not None and "a.weight" in refused.message and "b.weight" in refused.message
    finally:
        init_state.INIT_SAMPLE = old


def test_deferred_initialisation_is_built_and_judged_like_the_constructor():
    """worker.reset_build: on meta, to_empty (NaN, -1), then every reset_parameters(); the keys nobody wrote are
    found as such, and a reset_parameters() that draws otherwise than the reference's is refused on that path."""
    from foundry.evaluate.worker import reset_build

    class Plain(nn.Module):  # its own parameter, no reset_parameters: left as to_empty made it
        def __init__(self):
            super().__init__()
            self.linear = nn.Linear(24, 20)
            self.norm = nn.BatchNorm1d(20)
            self.scale = nn.Parameter(torch.ones(20))

    built = reset_build(Plain, [], torch).state_dict()
    assert bool(built["scale"].isnan().all()) and int(built["norm.num_batches_tracked"]) == 0
    assert bool(built["linear.weight"].isfinite().all()) and bool((built["norm.running_var"] == 1).all())
    states = [reset_build(Plain, [], torch).state_dict() for _ in range(INIT_DRAWS)]
    assert init_state.unwritten_keys(initial_states(states, init_state.INIT_SAMPLE, torch)) == {"scale"}

    class Drawn(nn.Linear):  # its reset_parameters() draws a standard normal weight, not nn.Linear's
        def reset_parameters(self):
            with torch.no_grad():
                self.weight.normal_()
                self.bias.zero_()

    reference = [reset_build(nn.Linear, [24, 20], torch).state_dict() for _ in range(INIT_DRAWS)]
    honest = [reset_build(nn.Linear, [24, 20], torch).state_dict() for _ in range(INIT_DRAWS)]
    assert initial_state(reference, initial_states(honest, init_state.INIT_SAMPLE, torch)) is None
    drawn = [reset_build(Drawn, [24, 20], torch).state_dict() for _ in range(INIT_DRAWS)]
    refused = initial_state(reference, initial_states(drawn, init_state.INIT_SAMPLE, torch))
    assert refused is not None and refused.rule == "initial_state" and "weight" in refused.message


def test_a_low_rank_start_too_large_to_send_whole_is_refused_by_a_block():
    """Over INIT_SAMPLE elements a matrix is sampled, and its spectrum judged on a block of secret rows and columns
    (a block of a rank-3 matrix has rank 3); an honest one passes."""
    torch.manual_seed(9)
    limit = 256  # 480 weights: sampled, and a 16 x 16 block sent

    class RankThree(Reference):
        def __init__(self):
            super().__init__()
            u = torch.nn.functional.normalize(torch.randn(20, 3), dim=1)
            v = torch.nn.functional.normalize(torch.randn(24, 3), dim=1)
            self.fc.weight.data = (u @ v.t()).clamp(-1, 1) * 24**-0.5

    old = init_state.INIT_SAMPLE
    init_state.INIT_SAMPLE = limit
    try:
        honest = initial_states(builds(Reference), limit, torch)
        assert tuple(honest["block_values"][0]["fc.weight"].shape) == (16, 16)
        assert initial_state(builds(Reference), honest) is None
        refused = initial_state(builds(Reference), initial_states(builds(RankThree), limit, torch))
        assert refused is not None and "fc.weight" in refused.message and "16 x 16 block" in refused.message
        honest["blocks"]["fc.weight"] = (honest["blocks"]["fc.weight"][0][:8], honest["blocks"]["fc.weight"][1])
        forged = initial_state(builds(Reference), honest)
        assert forged is not None and "rows are not a sample" in forged.message
    finally:
        init_state.INIT_SAMPLE = old


def test_a_layer_tied_to_another_transposed_is_refused():
    """An MLP's down projection drawn as its up projection's transposed, scaled to the honest range: each key an
    honest draw alone, their product positive definite; honest independent layers pass, sampled or sent whole."""
    torch.manual_seed(10)

    class Mlp(nn.Module):
        def __init__(self):
            super().__init__()
            self.up = nn.Linear(24, 96)
            self.down = nn.Linear(96, 24)

    class Tied(Mlp):
        def __init__(self):
            super().__init__()
            with torch.no_grad():
                self.down.weight.copy_(self.up.weight.t() * 0.5)  # U(+-1/sqrt(24)) / 2 = U(+-1/sqrt(96))

    assert initial_state(builds(Mlp), reported(Mlp)) is None
    refused = initial_state(builds(Mlp), reported(Tied))
    assert refused is not None and "up.weight and down.weight (its shape transposed)" in refused.message
    old = init_state.INIT_SAMPLE
    init_state.INIT_SAMPLE = 1024  # 2304 weights each: sampled, about 455 positions in common
    try:
        assert initial_state(builds(Mlp), initial_states(builds(Mlp), 1024, torch)) is None
        assert initial_state(builds(Mlp), initial_states(builds(Tied), 1024, torch)) is not None
    finally:
        init_state.INIT_SAMPLE = old


def test_one_build_in_eight_that_starts_elsewhere_is_refused():
    """A constructor that scales its weight by 1.1 in one build of eight is diluted in the pooled values (the pooled
    test alone passes it); each build's values against the reference's pooled refuse it, naming the build."""
    torch.manual_seed(11)
    count = {"built": 0}

    class Sometimes(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(256, 128)
            count["built"] += 1
            if count["built"] % INIT_DRAWS == 3:
                with torch.no_grad():
                    self.fc.weight.mul_(1.1)

    reference = builds(lambda: nn.Sequential(nn.Linear(256, 128)))
    reference = [{k.replace("0.", "fc.", 1): v for k, v in state.items()} for state in reference]
    report = reported(Sometimes)
    pooled = init_state.ks_statistic(
        torch.cat([s["fc.weight"].reshape(-1)[report["indices"]["fc.weight"]] for s in reference]),
        torch.cat([d["fc.weight"] for d in report["draws"]]),
    )
    assert pooled < ks_limit(INIT_DRAWS * init_state.INIT_SAMPLE, INIT_DRAWS * init_state.INIT_SAMPLE)
    refused = initial_state(reference, report)
    assert refused is not None and "fc.weight" in refused.message and "build 3 of 8" in refused.message, refused
    count["built"] = 0
    honest = reported(lambda: nn.Sequential(nn.Linear(256, 128)))
    honest["draws"] = [{k.replace("0.", "fc.", 1): v for k, v in d.items()} for d in honest["draws"]]
    honest["indices"] = {k.replace("0.", "fc.", 1): v for k, v in honest["indices"].items()}
    honest["neighbors"] = [{k.replace("0.", "fc.", 1): v for k, v in d.items()} for d in honest["neighbors"]]
    honest["blocks"] = {k.replace("0.", "fc.", 1): v for k, v in honest["blocks"].items()}
    honest["block_values"] = [{k.replace("0.", "fc.", 1): v for k, v in d.items()} for d in honest["block_values"]]
    assert initial_state(reference, honest) is None
