"""Load rules/*.yaml into frozen models. Unknown keys are errors."""

from foundry.rules.loader import GuardPolicy, RulesError, RuntimePolicy, TolerancePolicy, load_rules, rules_dir

__all__ = ["GuardPolicy", "RulesError", "RuntimePolicy", "TolerancePolicy", "load_rules", "rules_dir"]
