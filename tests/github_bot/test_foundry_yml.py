from __future__ import annotations

import json
from pathlib import Path

import pytest
from foundry.github.config import ConfigError, glob_match, parse_config, schema_text

ROOT = Path(__file__).resolve().parents[2]


def test_empty_or_missing_config_gives_defaults() -> None:
    for text in (None, "", "\n# only a comment\n"):
        config = parse_config(text)
        assert config.wants("ops/a.py")
        assert not config.wants("tests/test_a.py")
        assert not config.wants("ops/a_foundry.py")


def test_operator_settings_overlay_defaults() -> None:
    config = parse_config(
        """
version: 1
include: ["ops/**"]
defaults: {budget: 16, writer: template, labels: [perf]}
operators:
  ops/attn.py::Attention: {budget: 48, policy: hybrid, precision: bf16, dtype: bfloat16, inputs: [[2, 8, 64]]}
  ops/norm.py: {skip: true}
pull_requests: {labels: [foundry], min_speedup: 1.2}
"""
    )
    attn = config.settings_for("ops/attn.py::Attention")
    assert (attn.budget, attn.writer, attn.policy, attn.precision, attn.inputs) == (
        48,
        "template",
        "hybrid",
        "bf16",
        ((2, 8, 64),),
    )
    assert config.settings_for("ops/norm.py").skip
    assert config.settings_for("ops/other.py").budget == 16
    assert config.labels_for("ops/attn.py::Attention") == ("foundry", "perf")
    assert config.wants("ops/sub/x.py") and not config.wants("lib/x.py")


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("defaults: {budgte: 3}", "defaults.budgte"),
        ("defaults: {writer: gpt}", "defaults.writer"),
        ("operators: {ops/a.py: {budget: 0}}", "operators.ops/a.py.budget"),
        ("pull_requests: {min_speedup: 0.5}", "pull_requests.min_speedup"),
        ("operators: {'../etc/x.py': {}}", "operators"),
        ("versoin: 1", "versoin"),
    ],
)
def test_errors_name_the_key(text: str, key: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_config(text)
    assert f"key `{key}`" in str(err.value)
    assert str(err.value).startswith(".github/foundry.yml")


def test_yaml_errors_name_the_line() -> None:
    with pytest.raises(ConfigError, match=r"foundry.yml:3: not valid YAML"):
        parse_config("a: 1\nb: [\n  c: d: e\n")
    with pytest.raises(ConfigError, match="top level must be a mapping"):
        parse_config("- a\n- b\n")


@pytest.mark.parametrize(
    ("path", "pattern", "hit"),
    [
        ("ops/a.py", "**/*.py", True),
        ("a.py", "**/*.py", True),
        ("ops/deep/a.py", "ops/**", True),
        ("ops/a.py", "ops/*.py", True),
        ("ops/deep/a.py", "ops/*.py", False),
        ("pkg/tests/test_x.py", "test_*.py", True),
        ("tests/x.py", "tests/**", True),
        ("mytests/x.py", "tests/**", False),
    ],
)
def test_globs(path: str, pattern: str, hit: bool) -> None:
    assert glob_match(path, pattern) is hit


def test_committed_schema_is_current() -> None:
    committed = (ROOT / ".github" / "foundry.schema.json").read_text()
    assert committed == schema_text(), "regenerate: python -m foundry.github.config > .github/foundry.schema.json"
    schema = json.loads(committed)
    assert schema["additionalProperties"] is False
    assert "operators" in schema["properties"]


def test_readme_example_config_is_valid() -> None:
    docs = (ROOT / "docs" / "github.md").read_text()
    block = docs.split("```yaml\n# .github/foundry.yml\n", 1)[1].split("```", 1)[0]
    config = parse_config(block)
    assert config.operators


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('defaults: {budget: "3"}', "key `defaults.budget`: Input should be a valid integer"),
        ("defaults: {budget: true}", "key `defaults.budget`: Input should be a valid integer"),
        ("max_operators: 2.5", "key `max_operators`: Input should be a valid integer"),
        (
            'pull_requests: {publish_unmeasured: "no"}',
            "key `pull_requests.publish_unmeasured`: Input should be a valid",
        ),
        ("operators: {ops/a.py: {inputs: [[4, '8']]}}", "key `operators.ops/a.py.inputs.0.1`"),
        ("max_budget: 3\nmax_budget: 4\n", ":2: not valid YAML: duplicate key 'max_budget'"),
        ("operators:\n  ops/a.py: {budget: 2}\n  ops/a.py: {budget: 3}\n", "duplicate key 'ops/a.py'"),
        ("defaults: {budget: 2, budget: 3}", "duplicate key 'budget'"),
    ],
)
def test_values_are_not_coerced_and_keys_not_repeated(text: str, problem: str) -> None:
    with pytest.raises(ConfigError) as raised:
        parse_config(text, source=".github/foundry.yml at abc")
    assert str(raised.value).startswith(".github/foundry.yml at abc") and problem in str(raised.value)


def test_lists_and_whole_numbers_still_read_naturally() -> None:
    config = parse_config("pull_requests: {min_speedup: 2, labels: [a]}\noperators: {ops/a.py: {inputs: [[4, 8]]}}")
    assert config.pull_requests.min_speedup == 2.0 and config.pull_requests.labels == ("a",)
    assert config.settings_for("ops/a.py").inputs == ((4, 8),)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("defaults: {training: yes}", "key `defaults.training`: Input should be a valid boolean (given 'yes')"),
        (
            "operators: {ops/a.py: {skip: on}}",
            "ops/a.py.skip`: Input should be a valid boolean (given 'on')",
        ),
        ("defaults: {budget: 1:30}", "key `defaults.budget`: Input should be a valid integer (given '1:30')"),
        ("max_budget: 1_000", "key `max_budget`: Input should be a valid integer (given '1_000')"),
        ('defaults: {budget: "3"}', "(given '3')"),
    ],
)
def test_scalars_are_read_as_yaml_1_2_and_errors_name_the_value(text: str, problem: str) -> None:
    with pytest.raises(ConfigError) as raised:
        parse_config(text)
    assert problem in str(raised.value)


def test_a_merge_key_is_not_a_repeated_key() -> None:
    config = parse_config("defaults: &d {budget: 2, writer: llm}\noperators: {ops/a.py: {<<: *d, budget: 3}}\n")
    assert (config.settings_for("ops/a.py").budget, config.settings_for("ops/a.py").writer) == (3, "llm")
    assert parse_config("defaults: {training: true, budget: 2}").defaults.training is True


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (
            "operators:\n  ops/a.py: {budget: 2}\n  ops/a.py::Model: {budget: 3}\n",
            "key `operators`: Value error, 'ops/a.py' and 'ops/a.py::Model' name the same operator (Model of ops/a.py)",
        ),
        (
            "operators:\n  ops/a.py::Model: {budget: 3}\n  ops/a.py: {skip: true}\n",
            "'ops/a.py::Model' and 'ops/a.py' name the same operator",
        ),
        ("operators: {./ops/a.py: {budget: 2}}", "'./ops/a.py': write the path as 'ops/a.py'"),
        ("operators: {ops//a.py::Block: {budget: 2}}", "write the path as 'ops/a.py'"),
    ],
)
def test_one_operator_under_two_keys_is_an_error_naming_both(text: str, problem: str) -> None:
    with pytest.raises(ConfigError) as raised:
        parse_config(text)
    assert problem in str(raised.value)
    assert "given {" not in str(raised.value), "the whole mapping is not repeated back"


def test_file_and_file_model_keys_are_one_operator() -> None:
    config = parse_config("operators: {ops/a.py::Model: {budget: 3, inputs: [[4, 8]]}, ops/a.py::Block: {budget: 5}}")
    for ref in ("ops/a.py", "ops/a.py::Model"):
        assert (config.settings_for(ref).budget, config.settings_for(ref).inputs) == (3, ((4, 8),))
    assert config.settings_for("ops/a.py::Block").budget == 5
    assert parse_config("operators: {ops/a.py: {skip: true}}").settings_for("ops/a.py::Model").skip
