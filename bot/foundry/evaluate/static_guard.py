"""The static guard: an AST check of candidate source that fails closed.

Every rule has a name; rules/guard.yaml gives each its severity. A rejection names its rule and line.
"""

from __future__ import annotations

import ast
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass

from foundry.core.records import Diagnosis, FailureKind, Stage
from foundry.rules.loader import GuardPolicy, RulesError

RULES = (
    "defines_model_new",
    "has_triton_kernel",
    "forward_launches_kernel",
    "import_allowlist",
    "forbidden_name",
    "forbidden_attribute",
    "private_attribute",
    "reference_access",
    "subclass_reference",
    "try_except",
    "global_state",
    "state_in_forward",
    "star_import",
)

# CPython 3.11's ast.parse is not thread-safe ("AST constructor recursion depth mismatch" under
# concurrent parses); candidates of a generation are evaluated from several threads.
PARSE_LOCK = threading.Lock()

REFERENCE_NAMES = frozenset({"Model", "get_inputs", "get_init_inputs"})
MODULE_BASES = frozenset({"nn.Module", "torch.nn.Module", "Module"})
JIT_DECORATORS = frozenset({"triton.jit", "jit", "triton.autotune", "triton.heuristics"})
MUTATORS = frozenset(
    {
        "append",
        "extend",
        "update",
        "setdefault",
        "add",
        "insert",
        "pop",
        "popitem",
        "clear",
        "remove",
        "discard",
        "copy_",
        "fill_",
        "zero_",
    }
)
CONTAINER_CALLS = frozenset({"dict", "list", "set", "defaultdict", "OrderedDict", "deque"})


@dataclass(frozen=True)
class Finding:
    rule: str
    line: int
    message: str


def dotted(node: ast.AST) -> str:
    """`a.b.c` for Name/Attribute chains, '' otherwise."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


def decorator_name(node: ast.expr) -> str:
    return dotted(node.func if isinstance(node, ast.Call) else node)


class StaticGuard:
    def __init__(self, policy: GuardPolicy) -> None:
        unknown = sorted(set(policy.rules) - set(RULES))
        if unknown:
            raise RulesError(f"guard.yaml: unknown guard rule(s): {', '.join(unknown)}")
        missing = sorted(set(RULES) - set(policy.rules))
        if missing:
            raise RulesError(f"guard.yaml: rule(s) without a severity: {', '.join(missing)}")
        self.policy = policy

    def check(self, source: str) -> tuple[list[Diagnosis], list[Diagnosis]]:
        """Return (errors, warnings). A syntax error is a compile error, not a guard finding."""
        try:
            with PARSE_LOCK:
                tree = ast.parse(source)
        except SyntaxError as exc:
            diag = Diagnosis(
                stage=Stage.STATIC,
                kind=FailureKind.COMPILE_ERROR,
                message=f"syntax error: {exc.msg}",
                line=exc.lineno,
                evidence=(exc.text or "").rstrip(),
            )
            return [diag], []
        lines = source.splitlines()
        errors: list[Diagnosis] = []
        warnings: list[Diagnosis] = []
        seen: set[tuple[str, int]] = set()
        for finding in self.findings(tree):
            severity = self.policy.rules[finding.rule]
            if severity == "off" or (finding.rule, finding.line) in seen:
                continue
            seen.add((finding.rule, finding.line))
            text = lines[finding.line - 1].strip() if 0 < finding.line <= len(lines) else ""
            diag = Diagnosis(
                stage=Stage.STATIC,
                kind=FailureKind.STATIC_GUARD,
                rule=finding.rule,
                line=finding.line,
                message=finding.message,
                evidence=text,
            )
            (errors if severity == "error" else warnings).append(diag)
        errors.sort(key=lambda d: d.line or 0)
        return errors, warnings

    def findings(self, tree: ast.Module) -> Iterator[Finding]:
        yield from self.node_rules(tree)
        yield from self.structure_rules(tree)
        yield from self.global_state_rules(tree)

    # -- rules that look at single nodes ---------------------------------------------------------

    def node_rules(self, tree: ast.Module) -> Iterator[Finding]:
        allowed = set(self.policy.allowed_imports)
        forbidden_names = set(self.policy.forbidden_names)
        forbidden_attrs = set(self.policy.forbidden_attributes)
        stdlib_modules = set(sys.stdlib_module_names) - set(self.policy.stdlib_attribute_exceptions)
        for node in ast.walk(tree):
            line = getattr(node, "lineno", 0)
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name not in allowed:
                        yield Finding("import_allowlist", line, f"import of {alias.name!r} is not allowed")
            elif isinstance(node, ast.ImportFrom):
                module = node.module or ""
                if node.level or module not in allowed:
                    yield Finding("import_allowlist", line, f"import from {'.' * node.level}{module!r} is not allowed")
                for alias in node.names:
                    if alias.name == "*":
                        yield Finding("star_import", line, "star imports hide what is used")
                    elif alias.name.startswith("_"):
                        yield Finding("private_attribute", line, f"import of private name {alias.name!r}")
                    elif alias.name in forbidden_attrs or alias.name in forbidden_names:
                        yield Finding("forbidden_attribute", line, f"import of {alias.name!r} is not allowed")
            elif isinstance(node, ast.Name):
                if node.id in REFERENCE_NAMES:
                    yield Finding("reference_access", line, f"the candidate may not use the reference's {node.id!r}")
                elif node.id in forbidden_names:
                    yield Finding("forbidden_name", line, f"use of {node.id!r} is not allowed")
                elif node.id.startswith("__") and node.id.endswith("__"):
                    yield Finding("private_attribute", line, f"use of {node.id!r} is not allowed")
            elif isinstance(node, ast.Attribute):
                attr = node.attr
                on_self = isinstance(node.value, ast.Name) and node.value.id == "self"
                if attr == "__init__" and is_super_call(node.value):
                    continue
                if attr.startswith("__") or (attr.startswith("_") and not on_self):
                    yield Finding("private_attribute", line, f"access to private attribute {attr!r}")
                elif attr in forbidden_attrs:
                    yield Finding("forbidden_attribute", line, f"use of {dotted(node) or attr!r} is not allowed")
                elif attr in stdlib_modules and not on_self:
                    yield Finding(
                        "forbidden_attribute",
                        line,
                        f"{dotted(node) or attr!r} reaches the standard-library module {attr!r}",
                    )
            elif isinstance(node, (ast.Try, ast.TryStar)):
                yield Finding("try_except", line, "try/except is not allowed: no fallback around kernels")
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                yield Finding("global_state", line, f"{type(node).__name__.lower()} statement: kernels keep no state")
            elif isinstance(node, (ast.ClassDef, ast.FunctionDef)) and node.name in REFERENCE_NAMES:
                yield Finding("reference_access", line, f"the candidate may not define the reference's {node.name!r}")

    # -- rules about the candidate's structure ---------------------------------------------------

    def structure_rules(self, tree: ast.Module) -> Iterator[Finding]:
        classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
        functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
        kernels = {
            name
            for name, fn in functions.items()
            if any(decorator_name(d) in JIT_DECORATORS for d in fn.decorator_list)
        }
        if not kernels:
            yield Finding("has_triton_kernel", 1, "no @triton.jit kernel is defined at module level")
        model = classes.get("ModelNew")
        if model is None:
            yield Finding("defines_model_new", 1, "no class ModelNew is defined at module level")
            return
        for base in model.bases:
            if dotted(base) not in MODULE_BASES:
                yield Finding(
                    "subclass_reference",
                    model.lineno,
                    f"ModelNew must derive from nn.Module, not {dotted(base) or ast.unparse(base)!r}",
                )
        forward = method(model, "forward")
        if forward is None:
            yield Finding("forward_launches_kernel", model.lineno, "ModelNew has no forward method")
            return
        reached = reachable(forward, model, classes, functions)
        launched = {name for fn in reached for name in launches(fn)} & kernels
        if not launched:
            yield Finding(
                "forward_launches_kernel",
                forward.lineno,
                "ModelNew.forward does not reach any kernel[grid](...) launch of a @triton.jit kernel",
            )
        for fn in reached:
            if fn is method(model, "__init__"):
                continue
            yield from self_mutations(fn)

    def global_state_rules(self, tree: ast.Module) -> Iterator[Finding]:
        containers: set[str] = set()
        for node in tree.body:
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                value = node.value
                mutable = isinstance(value, (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp))
                if isinstance(value, ast.Call) and dotted(value.func).split(".")[-1] in CONTAINER_CALLS:
                    mutable = True
                if mutable:
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    containers |= {t.id for t in targets if isinstance(t, ast.Name)}
        if not containers:
            return
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.Lambda)):
                continue
            for node in ast.walk(fn):
                target = None
                if isinstance(node, (ast.Assign, ast.AugAssign, ast.Delete)):
                    for t in getattr(node, "targets", None) or [node.target]:
                        if isinstance(t, ast.Subscript):
                            target = dotted(t.value)
                elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                    if node.func.attr in MUTATORS:
                        target = dotted(node.func.value)
                if target in containers:
                    yield Finding(
                        "global_state",
                        node.lineno,
                        f"module-level container {target!r} is modified at run time (a result cache?)",
                    )


def is_super_call(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"


def method(cls: ast.ClassDef, name: str) -> ast.FunctionDef | None:
    for node in cls.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
    return None


def launches(fn: ast.FunctionDef) -> set[str]:
    """Names K launched as K[grid](...) inside fn."""
    found = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript):
            name = dotted(node.func.value)
            if name:
                found.add(name)
    return found


def reachable(
    start: ast.FunctionDef,
    cls: ast.ClassDef,
    classes: dict[str, ast.ClassDef],
    functions: dict[str, ast.FunctionDef],
) -> list[ast.FunctionDef]:
    """Functions reachable from start: module functions by name, self.methods, submodules' forward."""
    submodule_classes: dict[str, ast.ClassDef] = {}
    init = method(cls, "__init__")
    if init is not None:
        for node in ast.walk(init):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                callee = dotted(node.value.func)
                for target in node.targets:
                    if dotted(target).startswith("self.") and callee in classes:
                        submodule_classes[dotted(target)[5:]] = classes[callee]
    order: list[ast.FunctionDef] = []
    todo = [(start, cls)]
    seen: set[int] = set()
    while todo:
        fn, owner = todo.pop()
        if id(fn) in seen:
            continue
        seen.add(id(fn))
        order.append(fn)
        for node in ast.walk(fn):
            if not isinstance(node, ast.Call):
                continue
            name = dotted(node.func)
            if name in functions:
                todo.append((functions[name], owner))
            elif name.startswith("self.") and name.count(".") == 1:
                attr = name[5:]
                target = method(owner, attr)
                if target is not None:
                    todo.append((target, owner))
                elif owner is cls and attr in submodule_classes:
                    sub = submodule_classes[attr]
                    fwd = method(sub, "forward")
                    if fwd is not None:
                        todo.append((fwd, sub))
            elif name in classes:
                fwd = method(classes[name], "forward")
                if fwd is not None:
                    todo.append((fwd, classes[name]))
    return order


def self_mutations(fn: ast.FunctionDef) -> Iterator[Finding]:
    for node in ast.walk(fn):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        for target in targets:
            base = target.value if isinstance(target, ast.Subscript) else target
            if dotted(base).startswith("self."):
                yield Finding("state_in_forward", node.lineno, f"forward stores state on {dotted(base)!r}")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner = dotted(node.func.value)
            if owner.startswith("self.") and node.func.attr in MUTATORS:
                yield Finding("state_in_forward", node.lineno, f"forward mutates {owner!r}")
            if owner == "self" and node.func.attr in {"register_buffer", "register_parameter"}:
                yield Finding("state_in_forward", node.lineno, "forward registers new state")
