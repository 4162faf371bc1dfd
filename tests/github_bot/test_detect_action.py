"""Detection misses, through the action end to end: a push that changes only a helper file, or only
.github/foundry.yml, re-optimizes the operators it affects."""

from __future__ import annotations

import pytest
from foundry.github.config import ConfigError
from harness import ZERO, kernel_source, operator_source

pytestmark = pytest.mark.e2e

OP = "ops/scale.py"


def test_a_push_of_a_helper_file_or_of_the_config_alone_reoptimizes_the_operator(bot) -> None:
    helper = "def factor():\n    return {}\n"
    source = operator_source(2.0).replace("import torch\n", "import torch\nfrom ops.consts import factor\n", 1)
    source = source.replace("torch.relu(x) * 2.0", "torch.relu(x) * factor()")
    bot.candidates[OP] = kernel_source(2.0)
    sha1 = bot.dev.commit({OP: source, "ops/consts.py": helper.format(2.0)}, "add scale")
    bot.dev.push()
    assert bot.run("run", bot.env("push", bot.push_payload(ZERO, sha1), sha1)) == 0
    [pull] = bot.fake.open_pulls()

    bot.candidates[OP] = kernel_source(3.0)
    sha2 = bot.dev.commit({"ops/consts.py": helper.format(3.0)}, "scale by 3")
    bot.dev.push()
    assert bot.run("run", bot.env("push", bot.push_payload(sha1, sha2), sha2)) == 0
    assert bot.optimized == [OP, OP], "the helper's change is a change of the operator"
    assert bot.branch_file("foundry/main/ops-scale", "ops/scale_foundry.py") == kernel_source(3.0)
    assert [p["number"] for p in bot.fake.open_pulls()] == [pull["number"]]

    sha3 = bot.dev.commit({".github/foundry.yml": "operators: {ops/scale.py: {budget: 3}}\n"}, "config")
    bot.dev.push()
    env = bot.env("push", bot.push_payload(sha2, sha3), sha3)
    assert bot.run("run", env) == 0
    assert bot.optimized == [OP, OP, OP], "the operator's settings changed"


def test_a_push_of_the_file_that_holds_the_operators_base_class_reoptimizes_it(bot) -> None:
    base = "import torch\nfrom torch import nn\n\n\nclass Scaled(nn.Module):\n    def forward(self, x):\n"
    base += "        return torch.relu(x) * {}\n"
    source = operator_source(2.0).replace("from torch import nn\n", "from ops.layers import Scaled\n")
    source = source.replace("class Model(nn.Module):", "class Model(Scaled):")
    source = source.replace("    def forward(self, x):\n        return torch.relu(x) * 2.0\n", "")
    bot.candidates[OP] = kernel_source(2.0)
    sha1 = bot.dev.commit({OP: source, "ops/layers.py": base.format(2.0)}, "add scale")
    bot.dev.push()
    assert bot.run("run", bot.env("push", bot.push_payload(ZERO, sha1), sha1)) == 0
    assert bot.optimized == [OP], "Model(Scaled) is an operator: Scaled is an nn.Module of ops/layers.py"
    [pull] = bot.fake.open_pulls()

    bot.candidates[OP] = kernel_source(3.0)
    sha2 = bot.dev.commit({"ops/layers.py": base.format(3.0)}, "scale by 3")
    bot.dev.push()
    assert bot.run("run", bot.env("push", bot.push_payload(sha1, sha2), sha2)) == 0
    assert bot.optimized == [OP, OP], "the base class's change is a change of the operator"
    assert bot.branch_file("foundry/main/ops-scale", "ops/scale_foundry.py") == kernel_source(3.0)
    assert [p["number"] for p in bot.fake.open_pulls()] == [pull["number"]]


def test_aliased_modules_are_optimized_and_unread_files_say_why_in_the_summary(bot) -> None:
    aliased = operator_source(2.0).replace("from torch import nn\n", "import torch.nn as tnn\n")
    aliased = aliased.replace("(nn.Module)", "(tnn.Module)")
    odd = operator_source(3.0).replace("from torch import nn\n", "from mylib import Layer\n")
    odd = odd.replace("(nn.Module)", "(Layer)")
    bot.candidates[OP] = kernel_source(2.0)
    sha1 = bot.dev.commit({OP: aliased, "ops/odd.py": odd}, "two files")
    bot.dev.push()
    env = bot.env("push", bot.push_payload(ZERO, sha1), sha1)
    assert bot.run("run", env) == 0
    assert bot.optimized == [OP] and [p["head"] for p in bot.fake.open_pulls()] == ["foundry/main/ops-scale"]
    summary = env.step_summary.read_text()
    assert "Not read as operators" in summary and "`ops/odd.py`" in summary and "Model(Layer)" in summary

    sha2 = bot.dev.commit({"ops/odd.py": odd.replace("3.0", "4.0")}, "odd again")
    bot.dev.push()
    env = bot.env("push", bot.push_payload(sha1, sha2), sha2)
    assert bot.run("run", env) == 0 and bot.optimized == [OP]
    summary = env.step_summary.read_text()
    assert "Nothing to do" in summary and "ops/odd.py" in summary and "Model(Layer)" in summary


@pytest.mark.parametrize(
    ("config", "named"),
    [
        ('defaults: {budget: "3"}\n', "defaults.budget"),
        ("defaults: {budget: 3}\ndefaults: {budget: 4}\n", ":2: .*duplicate key 'defaults'"),
        (
            "operators:\n  ops/scale.py: {budget: 3}\n  ops/scale.py::Model: {budget: 5}\n",
            "'ops/scale.py' and 'ops/scale.py::Model' name the same operator",
        ),
    ],
)
def test_a_loose_or_repeated_config_value_stops_a_push_run_naming_it(bot, config: str, named: str) -> None:
    bot.candidates[OP] = kernel_source(2.0)
    sha = bot.dev.commit({OP: operator_source(2.0), ".github/foundry.yml": config}, "config")
    bot.dev.push()
    with pytest.raises(ConfigError, match=named) as raised:
        bot.run("run", bot.env("push", bot.push_payload(ZERO, sha), sha))
    assert ".github/foundry.yml" in str(raised.value)
    assert bot.optimized == [] and bot.fake.writes() == []
