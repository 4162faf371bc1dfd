"""Load operators (KernelBench format) and make their inputs."""

from foundry.spec.loader import LoadedOperator, SpecError, load_operator, parse_operator_ref

__all__ = ["LoadedOperator", "SpecError", "load_operator", "parse_operator_ref"]
