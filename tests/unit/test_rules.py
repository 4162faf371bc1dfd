from pathlib import Path

import pytest
import yaml
from foundry.evaluate.static_guard import RULES, StaticGuard
from foundry.rules.loader import GuardPolicy, RulesError, load_rules


def test_shipped_rules_load_and_cover_every_guard_rule():
    rules = load_rules()
    assert set(rules.guard.rules) == set(RULES)
    assert rules.tolerance.for_precision("fp32").atol == 1e-4
    assert rules.tolerance.for_precision("fp32").rtol == 1e-4
    assert "empty" in rules.runtime.strict_ops()
    StaticGuard(rules.guard)


def test_unknown_guard_rule_is_an_error():
    policy = load_rules().guard
    bad = GuardPolicy.model_validate({**policy.model_dump(), "rules": {**policy.rules, "no_such_rule": "error"}})
    with pytest.raises(RulesError, match="no_such_rule"):
        StaticGuard(bad)


def test_unknown_key_in_rules_file_is_an_error(tmp_path: Path):
    root = load_rules().root
    for name in ("guard.yaml", "tolerance.yaml", "runtime.yaml"):
        (tmp_path / name).write_text((Path(root) / name).read_text())
    data = yaml.safe_load((tmp_path / "tolerance.yaml").read_text())
    data["unexpected"] = 1
    (tmp_path / "tolerance.yaml").write_text(yaml.safe_dump(data))
    with pytest.raises(RulesError, match="unexpected"):
        load_rules(str(tmp_path))


def test_unknown_precision_is_an_error():
    with pytest.raises(RulesError, match="fp8"):
        load_rules().tolerance.for_precision("fp8")
