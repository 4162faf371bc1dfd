"""The static guard: an allowlist check of candidate source that fails closed.

Three allowlists decide what a candidate may write:
- syntax: every AST node type is listed in SYNTAX; anything else (match, async, yield, :=, string annotations,
  class keywords, decorators other than the allowed ones) is refused, naming the construct and line;
- objects: every Name/Attribute chain rooted at an imported module is resolved, in this (trusted) process, to
  the real object and must end at an object of rules/guard.yaml's allowed_objects; a module object, an importer,
  a private member, an assignment into a module, or anything unlisted is refused, naming the chain;
- builtins: a name that means a builtin must be in allowed_builtins (a local or parameter of the same name is
  the candidate's own).
Chains that start at values (tensors, self, kernels) cannot be resolved statically; their attribute names are
checked against a denylist (forbidden_attributes, standard-library module names, anything named like a hook).
Every rule has a name; rules/guard.yaml gives each its severity. A rejection names its rule and line.
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import json
import sys
import threading
import types
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from foundry.core.records import Diagnosis, FailureKind, Stage
from foundry.rules.loader import GuardPolicy, RulesError

RULES = (
    "defines_model_new",
    "has_triton_kernel",
    "forward_launches_kernel",
    "import_allowlist",
    "syntax_allowlist",
    "object_allowlist",
    "decorator_allowlist",
    "forbidden_name",
    "forbidden_attribute",
    "private_attribute",
    "reference_access",
    "subclass_reference",
    "try_except",
    "global_state",
    "state_in_forward",
    "star_import",
    "kernel_allowlist",
    "device_dispatch",
)

# CPython 3.11's ast.parse is not thread-safe ("AST constructor recursion depth mismatch" under
# concurrent parses); candidates of a generation are evaluated from several threads.
PARSE_LOCK = threading.Lock()

# The syntax a candidate may use. Not listed (refused): match statements and patterns (class and mapping
# patterns read attributes by keyword), async def / for / with and await, yield and yield from (a suspended
# generator keeps a context manager entered), := (binds across scopes), global / nonlocal (global_state),
# try / except (try_except), and the type-parameter syntax of newer Pythons.
SYNTAX: frozenset[type[ast.AST]] = frozenset(
    {
        ast.Module,
        # statements
        ast.FunctionDef,
        ast.ClassDef,
        ast.Return,
        ast.Delete,
        ast.Assign,
        ast.AugAssign,
        ast.AnnAssign,
        ast.For,
        ast.While,
        ast.If,
        ast.With,
        ast.withitem,
        ast.Raise,
        ast.Assert,
        ast.Import,
        ast.ImportFrom,
        ast.alias,
        ast.Expr,
        ast.Pass,
        ast.Break,
        ast.Continue,
        # expressions
        ast.BoolOp,
        ast.BinOp,
        ast.UnaryOp,
        ast.Lambda,
        ast.IfExp,
        ast.Dict,
        ast.Set,
        ast.ListComp,
        ast.SetComp,
        ast.DictComp,
        ast.GeneratorExp,
        ast.comprehension,
        ast.Compare,
        ast.Call,
        ast.keyword,
        ast.FormattedValue,
        ast.JoinedStr,
        ast.Constant,
        ast.Attribute,
        ast.Subscript,
        ast.Starred,
        ast.Name,
        ast.List,
        ast.Tuple,
        ast.Slice,
        ast.arguments,
        ast.arg,
        # contexts and operators
        ast.Load,
        ast.Store,
        ast.Del,
        ast.And,
        ast.Or,
        ast.operator,
        ast.unaryop,
        ast.cmpop,
    }
)
CONSTRUCTS = {
    "Match": "a match statement",
    "AsyncFunctionDef": "async def",
    "AsyncFor": "async for",
    "AsyncWith": "async with",
    "Await": "await",
    "Yield": "yield",
    "YieldFrom": "yield from",
    "NamedExpr": "an assignment expression (:=)",
    "TypeAlias": "a type alias statement",
}

REFERENCE_NAMES = frozenset({"Model", "get_inputs", "get_init_inputs"})
MUTATORS = frozenset(
    {"append", "extend", "update", "setdefault", "add", "insert", "pop", "popitem", "clear", "remove", "discard"}
)
MISSING = object()
# Calls that answer a one-pass iterator: kept beyond one call, every read consumes it (state without a write).
ITERATOR_BUILTINS = frozenset({"map", "filter", "zip", "enumerate", "reversed"})
ITERATOR_METHODS = frozenset(
    {
        "parameters",
        "named_parameters",
        "buffers",
        "named_buffers",
        "children",
        "named_children",
        "modules",
        "named_modules",
    }
)


@dataclass(frozen=True)
class Finding:
    rule: str
    line: int
    message: str


@dataclass(frozen=True)
class Allowlist:
    """guard.yaml's lists resolved to the real objects (kept alive so their ids stay theirs)."""

    imports: frozenset[str]
    builtins: frozenset[str]
    objects: dict[int, str]  # id(object) → the dotted path it was listed as
    decorators: frozenset[int]
    keep: tuple[Any, ...]
    forbidden: frozenset[str]
    stdlib: frozenset[str]


def lookup(obj: Any, attr: str) -> Any:
    """An attribute without running the object's code (no module __getattr__, no properties)."""
    try:
        return inspect.getattr_static(obj, attr)
    except AttributeError:
        return MISSING


def resolve_path(path: str) -> Any:
    """The object a trusted dotted path names, importing the modules along it; MISSING when absent."""
    parts = path.split(".")
    try:
        obj: Any = importlib.import_module(parts[0])
    except ImportError:
        return MISSING
    for i, part in enumerate(parts[1:], start=1):
        found = lookup(obj, part)
        if found is MISSING and isinstance(obj, types.ModuleType):
            try:
                found = importlib.import_module(".".join(parts[: i + 1]))
            except ImportError:
                return MISSING
        if found is MISSING:
            return MISSING
        obj = found
    return obj


_ALLOWLISTS: dict[str, Allowlist] = {}
CONSTANTS = (bool, int, float, complex, str)


def native(value: Any, package: str) -> bool:
    """A member that `package.*` may list: defined in that package (a helper it re-exports from elsewhere, like
    triton.language.math's functools.wraps or nn.init's typing names, is not), or a plain constant. Never a
    module."""
    if isinstance(value, types.ModuleType):
        return False
    if type(value) in CONSTANTS:
        return True
    where = getattr(value, "__module__", None)
    if not isinstance(where, str):
        where = type(value).__module__
    return where == package or where.startswith(f"{package}.")


def build_allowlist(policy: GuardPolicy) -> Allowlist:
    key = json.dumps(policy.model_dump(), sort_keys=True)
    if key in _ALLOWLISTS:
        return _ALLOWLISTS[key]
    objects: dict[int, str] = {}
    keep: list[Any] = []
    for entries in policy.allowed_objects.values():
        for entry in entries:
            if entry.endswith(".*"):
                module = resolve_path(entry[:-2])
                if not isinstance(module, types.ModuleType):
                    continue
                for name, value in vars(module).items():
                    if not name.startswith("_") and native(value, entry.split(".")[0]):
                        objects.setdefault(id(value), f"{entry[:-2]}.{name}")
                        keep.append(value)
                continue
            value = resolve_path(entry)
            if value is MISSING:
                continue  # not in this torch / triton version
            if isinstance(value, types.ModuleType):
                raise RulesError(f"guard.yaml: allowed_objects lists the module {entry!r}; list its members")
            objects.setdefault(id(value), entry)
            keep.append(value)
    decorators = set()
    for entry in policy.allowed_decorators:
        value = resolve_path(entry)
        if value is not MISSING:
            decorators.add(id(value))
            keep.append(value)
    built = Allowlist(
        imports=frozenset(policy.allowed_imports),
        builtins=frozenset(policy.allowed_builtins),
        objects=objects,
        decorators=frozenset(decorators),
        keep=tuple(keep),
        forbidden=frozenset(policy.forbidden_attributes),
        stdlib=frozenset(sys.stdlib_module_names) - set(policy.stdlib_attribute_exceptions),
    )
    _ALLOWLISTS[key] = built
    return built


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


def chain_of(node: ast.Attribute) -> tuple[ast.expr, list[str]]:
    """(root expression, attribute names from the root outwards)."""
    attrs: list[str] = []
    current: ast.expr = node
    while isinstance(current, ast.Attribute):
        attrs.append(current.attr)
        current = current.value
    return current, attrs[::-1]


def is_main_guard(node: ast.stmt) -> bool:
    """`if __name__ == "__main__":`: its body never runs in the worker (the candidate's module is loaded under
    another name, jobfiles.load_candidate), so the guard skips it."""
    if not isinstance(node, ast.If) or not isinstance(node.test, ast.Compare):
        return False
    test = node.test
    return (
        isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.Eq)
        and len(test.comparators) == 1
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value == "__main__"
    )


def module_body(tree: ast.Module) -> list[ast.stmt]:
    """The module's statements that run: a main guard's body does not (its else does)."""
    body: list[ast.stmt] = []
    for stmt in tree.body:
        body.extend(stmt.orelse if is_main_guard(stmt) else [stmt])  # type: ignore[attr-defined]
    return body


# -- scopes ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Imported:
    obj: Any
    path: str


@dataclass
class Scope:
    kind: str  # module, class, function
    node: ast.AST
    parent: Scope | None
    bound: set[str] = field(default_factory=set)
    imported: dict[str, Imported] = field(default_factory=dict)
    jit: bool = False  # the body of a @triton.jit kernel (or a lambda / comprehension inside one)


NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.ListComp, ast.SetComp, ast.DictComp)


def own_nodes(body: list[ast.stmt]) -> Iterator[ast.AST]:
    """Every node of one scope's own code: nested functions, classes, lambdas and comprehensions are not
    entered."""
    todo: list[ast.AST] = list(body)
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, (*NESTED, ast.GeneratorExp)):
            todo.extend(ast.iter_child_nodes(node))


def bindings(body: list[ast.stmt], imports: bool = True) -> set[str]:
    """Names bound in one scope's own code (nested scopes are not entered; their names are). `del NAME` binds
    nothing: a name only deleted is not the scope's own (at module or class level it reads the builtin)."""
    names: set[str] = set()
    todo: list[ast.AST] = list(body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            todo.extend(node.decorator_list)
            if isinstance(node, ast.ClassDef):
                todo.extend(node.bases)
            else:
                todo.extend(node.args.defaults + [d for d in node.args.kw_defaults if d is not None])
            continue
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)) and imports:
            for alias in node.names:
                if alias.name != "*":
                    names.add(alias.asname or alias.name.split(".")[0])
        todo.extend(ast.iter_child_nodes(node))
    return names


def parameters(args: ast.arguments) -> set[str]:
    every = args.posonlyargs + args.args + args.kwonlyargs
    every += [a for a in (args.vararg, args.kwarg) if a is not None]
    return {a.arg for a in every}


# -- the scan of every node --------------------------------------------------------------------------------


class Scan:
    """One walk over the tree with Python's scoping: syntax, imports, names, chains, decorators, writes."""

    def __init__(self, allow: Allowlist, tree: ast.Module) -> None:
        self.allow = allow
        self.tree = tree
        self.findings: list[Finding] = []
        self.module_classes = {n.name for n in tree.body if isinstance(n, ast.ClassDef)}
        self.direct_hasattr: set[int] = set()  # ids of the Name nodes of hasattr(...) calls (check_hasattr)
        self.parents = {id(child): parent for parent in ast.walk(tree) for child in ast.iter_child_nodes(parent)}
        self.device_checked: set[int] = set()  # nodes of device tests already judged (device_idiom)
        self.kernel_names: set[str] = set()  # module-level @triton.jit functions (run)
        self.constexpr_globals: set[str] = set()  # module-level NAME = tl.constexpr(...) (run)
        self.module_definitions = self.module_classes | {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
        # private fields the candidate itself assigns (self._cache = ...): x._field of those names is fine
        self.own_private = (
            {
                n.attr
                for n in ast.walk(tree)
                if isinstance(n, ast.Attribute)
                and isinstance(n.ctx, ast.Store)
                and n.attr.startswith("_")
                and not n.attr.startswith("__")
            }
            - library_internals()
            - library_privates()
        )

    def add(self, rule: str, node: ast.AST, message: str) -> None:
        self.findings.append(Finding(rule, getattr(node, "lineno", 0), message))

    # scopes

    def run(self) -> list[Finding]:
        scope = Scope("module", self.tree, None, bindings(module_body(self.tree)))
        self.bind_imports(module_body(self.tree), scope)
        constexpr = resolve_path("triton.language.constexpr")
        for stmt in module_body(self.tree):
            if isinstance(stmt, ast.FunctionDef) and any(self.is_jit_decorator(d, scope) for d in stmt.decorator_list):
                self.kernel_names.add(stmt.name)
            elif isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call):
                if self.resolve(stmt.value.func, scope) is constexpr:
                    self.constexpr_globals |= {t.id for t in stmt.targets if isinstance(t, ast.Name)}
        for stmt in self.tree.body:
            if is_main_guard(stmt):
                for node in stmt.orelse:
                    self.visit(node, scope)
                continue
            self.visit(stmt, scope)
        return self.findings

    def find(self, name: str, scope: Scope) -> Scope | None:
        """The scope that binds name as seen from scope (class scopes are seen only from their own body)."""
        current: Scope | None = scope
        first = True
        while current is not None:
            if current.kind == "class" and not first:
                current = current.parent
                continue
            if name in current.bound:
                return current
            first = False
            current = current.parent
        return None

    # the walk

    def visit(self, node: ast.AST, scope: Scope) -> None:
        kind = type(node)
        if kind not in SYNTAX and not any(issubclass(kind, allowed) for allowed in SYNTAX):
            self.refuse_syntax(node)
            return
        handler = getattr(self, f"visit_{kind.__name__}", None)
        if handler is not None:
            handler(node, scope)
        else:
            self.children(node, scope)

    def children(self, node: ast.AST, scope: Scope) -> None:
        for child in ast.iter_child_nodes(node):
            self.visit(child, scope)

    def refuse_syntax(self, node: ast.AST) -> None:
        name = type(node).__name__
        if isinstance(node, (ast.Try, ast.TryStar)):
            self.add("try_except", node, "try/except is not allowed: no fallback around kernels")
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            self.add("global_state", node, f"{name.lower()} statement: kernels keep no state")
        elif isinstance(node, ast.ExceptHandler):
            return  # reported with its try
        else:
            what = CONSTRUCTS.get(name) or ("a match pattern" if name.startswith("Match") else f"ast.{name}")
            self.add("syntax_allowlist", node, f"{what} is not allowed in a candidate (not on the syntax allowlist)")

    def shadows_builtin(self, node: ast.FunctionDef | ast.ClassDef, scope: Scope) -> None:
        if node.name in REFERENCE_NAMES:
            self.add("reference_access", node, f"the candidate may not define the reference's {node.name!r}")
        if scope.kind in ("module", "class") and self.is_banned_builtin(node.name):
            self.add("forbidden_name", node, f"{node.name!r} is a builtin: rename the {scope.kind}-level definition")

    def visit_FunctionDef(self, node: ast.FunctionDef, scope: Scope) -> None:
        self.shadows_builtin(node, scope)
        if node.name.startswith("__") and node.name.endswith("__") and node.name != "__init__":
            self.add("private_attribute", node, f"defining {node.name!r} is not allowed (only __init__)")
        for decorator in node.decorator_list:
            self.check_decorator(decorator, scope)
            self.visit(decorator, scope)
        self.visit_arguments_outside(node.args, scope)
        if node.returns is not None:
            self.annotation(node.returns, scope)
        jit = scope.jit or any(self.is_jit_decorator(d, scope) for d in node.decorator_list)
        inner = Scope("function", node, scope, parameters(node.args) | bindings(node.body), jit=jit)
        self.bind_imports(node.body, inner)
        for stmt in node.body:
            self.visit(stmt, inner)

    def visit_Lambda(self, node: ast.Lambda, scope: Scope) -> None:
        self.visit_arguments_outside(node.args, scope)
        inner = Scope("function", node, scope, parameters(node.args), jit=scope.jit)
        self.visit(node.body, inner)

    def visit_arguments_outside(self, args: ast.arguments, scope: Scope) -> None:
        """Defaults and annotations are evaluated in the enclosing scope. A default is evaluated once and shared
        by every call: only constants, names and tuples of them (a list, dict or call result would keep state)."""
        for default in args.defaults + [d for d in args.kw_defaults if d is not None]:
            self.visit(default, scope)
            if not plain_default(default):
                self.add(
                    "global_state",
                    default,
                    f"default argument {ast.unparse(default)!r}: a default is one object shared by every call; "
                    "use constants, names or tuples of them (None, then build it inside)",
                )
        every = args.posonlyargs + args.args + args.kwonlyargs
        every += [a for a in (args.vararg, args.kwarg) if a is not None]
        for arg in every:
            if arg.annotation is not None:
                self.annotation(arg.annotation, scope)

    def annotation(self, node: ast.expr, scope: Scope) -> None:
        for inner in ast.walk(node):
            if isinstance(inner, ast.Constant) and isinstance(inner.value, str):
                self.add(
                    "syntax_allowlist",
                    inner,
                    "string annotations are not allowed (some libraries evaluate them as code): write the type",
                )
                return
        self.visit(node, scope)

    def visit_AnnAssign(self, node: ast.AnnAssign, scope: Scope) -> None:
        self.annotation(node.annotation, scope)
        self.visit(node.target, scope)
        if node.value is not None:
            self.visit(node.value, scope)
            self.check_kept_iterator(node, [node.target], node.value, scope)

    def visit_Assign(self, node: ast.Assign, scope: Scope) -> None:
        self.children(node, scope)
        self.check_kept_iterator(node, node.targets, node.value, scope)

    def check_kept_iterator(self, node: ast.stmt, targets: list[ast.expr], value: ast.expr, scope: Scope) -> None:
        """An iterator kept at module or class level or on an object (ITER = map(...), self.it = (g for ...)):
        each call that reads it gets the next items, so the calls differ without any write."""
        kept = scope.kind != "function" or any(not isinstance(t, ast.Name) for t in unpacked(targets))
        if kept and any(self.makes_iterator(part, scope) for part in displayed(value)):
            self.add(
                "global_state",
                node,
                "an iterator (map, filter, zip, enumerate, reversed, a generator) kept beyond the call is state: "
                "every read consumes it; keep a list or tuple",
            )

    def makes_iterator(self, node: ast.expr, scope: Scope) -> bool:
        if isinstance(node, ast.GeneratorExp):
            return True
        if not isinstance(node, ast.Call):
            return False
        func = node.func
        if isinstance(func, ast.Name):
            return func.id in ITERATOR_BUILTINS and self.find(func.id, scope) is None
        return isinstance(func, ast.Attribute) and func.attr in ITERATOR_METHODS

    def visit_ClassDef(self, node: ast.ClassDef, scope: Scope) -> None:
        self.shadows_builtin(node, scope)
        for stmt in node.body:
            defined = [stmt.name] if isinstance(stmt, ast.FunctionDef) else []
            if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                defined = [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
            for name in defined:
                if name in UNCHECKED_EXTENSIONS:
                    self.add(
                        "forbidden_attribute",
                        stmt,
                        f"{node.name}.{name}: {UNCHECKED_EXTENSIONS[name]} is never run by the check (it runs forward "
                        "and backward only), so a wrong rule would ship unverified; leave it out (torch.func then "
                        "refuses the Function loudly instead of running an unchecked rule)",
                    )
                elif name in library_internals() and name not in OVERRIDABLE:
                    self.add(
                        "forbidden_attribute",
                        stmt,
                        f"{node.name}.{name} overrides a member of nn.Module / autograd.Function that the harness "
                        f"relies on (only {', '.join(sorted(OVERRIDABLE))} may be defined)",
                    )
        for decorator in node.decorator_list:
            self.add("decorator_allowlist", decorator, "class decorators are not allowed")
        for keyword in node.keywords:
            self.add(
                "syntax_allowlist",
                keyword.value,
                f"class keyword {keyword.arg or '**'}= is not allowed (metaclasses and class hooks run code)",
            )
        for base in node.bases:
            self.visit(base, scope)
            if node.name != "ModelNew":
                self.check_base(base, scope)
        inner = Scope("class", node, scope, bindings(node.body))
        for name in sorted(inner.bound):
            # A class body reads names with LOAD_NAME: one its own code has not bound (dead code, a later line)
            # falls through to the enclosing scopes, so the same name must not also be bound out there.
            if not name.startswith("__") and self.find(name, scope) is not None:
                where = next(
                    (
                        n
                        for n in own_nodes(node.body)
                        if (isinstance(n, ast.Name) and n.id == name)
                        or (isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name == name)
                        or (isinstance(n, ast.alias) and (n.asname or n.name.split(".")[0]) == name)
                    ),
                    node,
                )
                self.add(
                    "object_allowlist",
                    where if hasattr(where, "lineno") else node,
                    f"class {node.name} binds {name!r}, which is also bound outside it: rename the class-level "
                    "name (an unbound class-level name reads the outer one)",
                )
        self.bind_imports(node.body, inner)
        for stmt in node.body:
            self.visit(stmt, inner)

    def comprehension_scope(self, node: ast.AST, parts: list[ast.expr], scope: Scope) -> None:
        generators: list[ast.comprehension] = node.generators  # type: ignore[attr-defined]
        if any(g.is_async for g in generators):
            self.add("syntax_allowlist", node, "async comprehensions are not allowed")
        self.visit(generators[0].iter, scope)
        names: set[str] = set()
        for g in generators:
            names |= {n.id for n in ast.walk(g.target) if isinstance(n, ast.Name)}
        inner = Scope("function", node, scope, names, jit=scope.jit)
        for i, g in enumerate(generators):
            self.visit(g.target, inner)
            if i:
                self.visit(g.iter, inner)
            for cond in g.ifs:
                self.visit(cond, inner)
        for part in parts:
            self.visit(part, inner)

    def visit_ListComp(self, node: ast.ListComp, scope: Scope) -> None:
        self.comprehension_scope(node, [node.elt], scope)

    visit_SetComp = visit_ListComp
    visit_GeneratorExp = visit_ListComp  # type: ignore[assignment]

    def visit_DictComp(self, node: ast.DictComp, scope: Scope) -> None:
        self.comprehension_scope(node, [node.key, node.value], scope)

    def visit_If(self, node: ast.If, scope: Scope) -> None:
        if is_main_guard(node):
            self.add("syntax_allowlist", node, 'if __name__ == "__main__": is allowed at module level only')
        self.device_idiom(node, scope)
        self.children(node, scope)

    def visit_IfExp(self, node: ast.IfExp, scope: Scope) -> None:
        self.device_idiom(node, scope)
        self.children(node, scope)

    def visit_Compare(self, node: ast.Compare, scope: Scope) -> None:
        if not scope.jit and self.device_probe(node, scope):
            self.refuse_device_probe(node, scope)
        self.children(node, scope)

    def visit_FormattedValue(self, node: ast.FormattedValue, scope: Scope) -> None:
        if not scope.jit and names_device(node.value):
            self.refuse_device_probe(node, scope)
        self.children(node, scope)

    # imports

    def bind_imports(self, body: list[ast.stmt], scope: Scope) -> None:
        """Imports anywhere in this scope's own code (inside if/for/with too, not in nested scopes) bind resolved
        modules and objects (each import is checked when visited)."""
        for node in own_nodes(body):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name not in self.allow.imports:
                        continue
                    if alias.asname:
                        target = alias.name
                        scope.imported[alias.asname] = Imported(resolve_path(target), target)
                    else:
                        top = alias.name.split(".")[0]
                        scope.imported[top] = Imported(resolve_path(top), top)
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module in self.allow.imports:
                for alias in node.names:
                    if alias.name == "*" or alias.name.startswith("_"):
                        continue
                    path = f"{node.module}.{alias.name}"
                    if path in self.allow.imports:
                        obj = resolve_path(path)
                    else:
                        obj = lookup(resolve_path(node.module), alias.name)
                    scope.imported[alias.asname or alias.name] = Imported(obj, path)

    def visit_Import(self, node: ast.Import, scope: Scope) -> None:
        for alias in node.names:
            if alias.name not in self.allow.imports:
                self.add("import_allowlist", node, f"import of {alias.name!r} is not allowed")
            elif resolve_path(alias.name) is MISSING:
                self.add("import_allowlist", node, f"{alias.name!r} cannot be imported here")
            else:
                path = alias.name if alias.asname else alias.name.split(".")[0]
                self.check_rebinding(alias.asname or path, path, node, scope)

    def visit_ImportFrom(self, node: ast.ImportFrom, scope: Scope) -> None:
        module = node.module or ""
        if node.level or module not in self.allow.imports:
            self.add("import_allowlist", node, f"import from {'.' * node.level}{module!r} is not allowed")
            return
        for alias in node.names:
            name = alias.name
            if name == "*":
                self.add("star_import", node, "star imports hide what is used")
                continue
            if name.startswith("_"):
                self.add("private_attribute", node, f"import of private name {name!r}")
                continue
            path = f"{module}.{name}"
            if path in self.allow.imports and resolve_path(path) is MISSING:
                self.add("import_allowlist", node, f"{path!r} cannot be imported here")
                continue
            if path not in self.allow.imports:
                obj = lookup(resolve_path(module), name)
                if id(obj) in unrunnable_libdevice():
                    self.refuse_libdevice(node, path)
                    continue
                if obj is MISSING or id(obj) not in self.allow.objects:
                    rule = "forbidden_attribute" if self.denied(name) else "object_allowlist"
                    self.add(rule, node, f"from {module} import {name}: {path} is not on the allowlist")
                    continue
            self.check_rebinding(alias.asname or name, path, node, scope)

    def check_rebinding(self, name: str, path: str, node: ast.AST, scope: Scope) -> None:
        """An imported name means one object in its scope: not also assigned, a parameter, a builtin, or another
        import (the guard resolves one of them; a dead-code import or a parameter would be what runs)."""
        if scope.kind in ("module", "class") and self.is_banned_builtin(name):
            self.add("forbidden_name", node, f"{name!r} is a builtin: import it under another name")
        body = module_body(self.tree) if scope.kind == "module" else scope.node.body  # type: ignore[attr-defined]
        assigned = bindings(body, imports=False)
        if scope.kind == "function":
            assigned |= parameters(scope.node.args)  # type: ignore[attr-defined]
        if name in assigned:
            self.add("object_allowlist", node, f"the imported name {name!r} is also assigned: keep imports unchanged")
        imported = scope.imported.get(name)
        if imported is not None and imported.path != path:
            self.add(
                "object_allowlist",
                node,
                f"{name!r} is imported as both {imported.path} and {path}: one name, one import",
            )

    # names and chains

    def denied(self, attr: str) -> bool:
        return attr in self.allow.forbidden or attr in self.allow.stdlib or "hook" in attr.lower()

    def visit_Name(self, node: ast.Name, scope: Scope) -> None:
        name = node.id
        owner = self.find(name, scope)
        if name.startswith("__") and name.endswith("__"):
            self.add("private_attribute", node, f"use of {name!r} is not allowed")
            return
        if scope.jit and isinstance(node.ctx, ast.Load) and not self.kernel_name_ok(node, owner):
            return
        if isinstance(node.ctx, ast.Del) and owner is not scope:
            # `if False: del exec` would make exec the scope's own name to a guard that counted it; at run time a
            # module- or class-level name never bound reads the builtin.
            self.add("forbidden_name", node, f"del {name}: {name!r} is not assigned in this scope")
            return
        if owner is None:
            if isinstance(node.ctx, ast.Load):
                self.check_builtin(node)
            return
        if owner.kind in ("module", "class") and name in REFERENCE_NAMES:
            self.add("reference_access", node, f"the candidate may not use the reference's {name!r}")
        if owner.kind in ("module", "class") and isinstance(node.ctx, ast.Store) and self.is_banned_builtin(name):
            self.add("forbidden_name", node, f"{name!r} is a builtin: rename the {owner.kind}-level name")
        imported = owner.imported.get(name)
        if imported is not None and isinstance(node.ctx, ast.Load):
            self.check_object(node, imported, [], scope)

    def is_banned_builtin(self, name: str) -> bool:
        import builtins

        return not name.startswith("__") and hasattr(builtins, name) and name not in self.allow.builtins

    def check_hasattr(self, node: ast.Call) -> None:
        """hasattr answers one bool, and one bool tells a checked call from use: the attribute it asks about must be
        one the guard would let the candidate read as x.name (a string literal, public or a private field the
        candidate assigns itself, no hook or denied name, nothing naming the harness)."""
        name = node.args[1] if len(node.args) == 2 and not node.keywords else None
        if not (isinstance(name, ast.Constant) and isinstance(name.value, str)):
            self.add("forbidden_name", node, "hasattr needs a string literal naming the attribute")
            return
        attr = name.value
        private = attr.startswith("_") and (attr.startswith("__") or attr not in self.own_private)
        if private or not attr.isidentifier() or self.denied(attr) or "foundry" in attr.lower():
            self.add(
                "forbidden_name", node, f"hasattr(..., {attr!r}) asks about a private, harness or denied attribute"
            )

    def check_builtin(self, node: ast.Name) -> None:
        name = node.id
        if name == "hasattr" and id(node) not in self.direct_hasattr:
            self.add("forbidden_name", node, "hasattr may only be called directly (hasattr(x, 'name'))")
            return
        if name in REFERENCE_NAMES:
            self.add("reference_access", node, f"the candidate may not use the reference's {name!r}")
        elif name not in self.allow.builtins:
            self.add("forbidden_name", node, f"use of the builtin {name!r} is not allowed")

    def visit_Attribute(self, node: ast.Attribute, scope: Scope) -> None:
        root, attrs = chain_of(node)
        if isinstance(root, ast.Name):
            owner = self.find(root.id, scope)
            imported = owner.imported.get(root.id) if owner is not None else None
            if imported is not None:
                if scope.jit and not kernel_import(imported.path):
                    self.refuse_kernel_import(node, root.id, imported.path)
                    return
                if not scope.jit and self.device_probe(node, scope):
                    self.refuse_device_probe(node, scope)
                if isinstance(node.ctx, (ast.Store, ast.Del)):
                    path = ".".join([root.id, *attrs])
                    rule = "forbidden_attribute" if any(self.denied(a) for a in attrs) else "object_allowlist"
                    self.add(rule, node, f"assigning to {path!r} changes a module: not allowed")
                    return
                self.check_object(node, imported, attrs, scope, root.id)
                return
            if root.id.startswith("__"):
                self.visit(root, scope)
                return
            self.visit(root, scope)
            self.check_value_chain(node, root, attrs, scope)
            return
        self.visit(root, scope)
        self.check_value_chain(node, root, attrs, scope)

    def check_object(self, node: ast.expr, imported: Imported, attrs: list[str], scope: Scope, alias: str = "") -> None:
        """A chain rooted at an imported module or object: resolve it and look the final object up."""
        written = ".".join([alias or imported.path.split(".")[-1], *attrs]) if attrs else (alias or imported.path)
        obj = imported.obj
        path = imported.path
        for i, attr in enumerate(attrs):
            if attr == "__init__" and i == len(attrs) - 1 and isinstance(obj, type) and id(obj) in self.allow.objects:
                return  # nn.Module.__init__(self): the base class's initializer
            listed = obj is not MISSING and id(lookup(obj, attr)) in self.allow.objects
            if attr.startswith("_") and not (listed and not attr.startswith("__")):
                hint = ""
                if path.startswith("torch.nn.init"):
                    hint = (
                        " (of nn.init's private helpers only _calculate_fan_in_and_fan_out is listed; use the "
                        "public nn.init functions)"
                    )
                self.add(
                    "private_attribute",
                    node,
                    f"{written!r} reaches the private member {path}.{attr}: private library members are refused" + hint,
                )
                return
            obj = lookup(obj, attr) if obj is not MISSING else MISSING
            path = f"{path}.{attr}"
        if obj is not MISSING and id(obj) in unrunnable_libdevice():
            self.refuse_libdevice(node, written)
            return
        if obj is not MISSING and id(obj) in self.allow.objects:
            return
        if any(self.denied(a) for a in attrs):
            self.add("forbidden_attribute", node, f"{written!r} names a forbidden attribute")
        rule = "object_allowlist"
        if isinstance(obj, types.ModuleType):
            what = f"{written!r} is the module {obj.__name__}: use its listed members (module objects are refused)"
        elif obj is MISSING:
            what = f"{written!r} ({path}) cannot be resolved to a listed object"
        else:
            what = f"{written!r} ({path}) is not on the static guard's allowlist"
        self.add(rule, node, what)

    def check_value_chain(self, node: ast.Attribute, root: ast.expr, attrs: list[str], scope: Scope) -> None:
        """Attributes of values the guard cannot resolve (tensors, self, kernels): the denylist. Inside a kernel,
        the allowlist of Triton's language members (check_kernel_chain)."""
        written = dotted(node) or f"….{'.'.join(attrs)}"
        if scope.jit and not self.check_kernel_chain(node, attrs, written):
            return
        if not scope.jit and self.device_probe(node, scope):
            self.refuse_device_probe(node, scope)
        for i, attr in enumerate(attrs):
            if attr.startswith("__"):
                if attr == "__init__" and i == len(attrs) - 1 and self.initializer_owner(root, attrs[:i], scope):
                    continue
                self.add("private_attribute", node, f"access to private attribute {attr!r} in {written!r}")
                return
            if attr.startswith("_") and (attr not in self.own_private or dotted(root) != "self"):
                self.add(
                    "private_attribute",
                    node,
                    f"access to private attribute {attr!r} in {written!r} (only private fields the candidate "
                    "assigns itself, on self)",
                )
                return
            if attr in self.allow.forbidden or "hook" in attr.lower():
                self.add("forbidden_attribute", node, f"use of {written!r} is not allowed")
                return
            if attr in self.allow.stdlib:
                self.add("forbidden_attribute", node, f"{written!r} reaches the standard-library module {attr!r}")
                return
        if isinstance(node.ctx, (ast.Store, ast.Del)) and isinstance(root, ast.Name):
            self.check_write(node, root, scope)

    def initializer_owner(self, root: ast.expr, attrs: list[str], scope: Scope) -> bool:
        """super().__init__ or CandidateClass.__init__."""
        if attrs:
            return False
        if isinstance(root, ast.Call) and isinstance(root.func, ast.Name) and root.func.id == "super":
            return self.find("super", scope) is None
        return isinstance(root, ast.Name) and root.id in self.module_classes

    # writes from functions into module-level objects

    def check_write(self, node: ast.expr, root: ast.Name, scope: Scope) -> None:
        if scope.kind == "module" and isinstance(node, ast.Attribute):
            owner = self.find(root.id, scope)
            imported = owner is not None and root.id in owner.imported
            if not imported and root.id not in self.module_definitions:  # imports: refused as module changes
                self.add(
                    "global_state",
                    node,
                    f"module-level code sets an attribute of {root.id!r}: at import, candidate code changes only "
                    "the classes and functions it defines",
                )
            return
        if scope.kind != "function":
            return
        owner = self.find(root.id, scope)
        # The candidate's own classes and functions too: a class attribute (ModelNew.calls += 1) or a function
        # attribute is state shared by every call and every instance.
        if owner is scope and root.id == class_parameter(scope.node):
            self.add("global_state", node, f"a classmethod writes its class {root.id!r}: state shared by every call")
        if owner is scope and root.id in defaulted(scope.node):
            self.add(
                "global_state",
                node,
                f"{root.id!r} is a parameter with a default: writing it writes the one default object every call "
                "shares",
            )
        if owner is not None and owner is not scope and owner.kind == "function" and self.closes_over(owner, scope):
            self.add(
                "global_state",
                node,
                f"{root.id!r} belongs to an enclosing function: a closure that writes it keeps state across calls",
            )
        if owner is not None and owner.kind in ("module", "class"):
            what = "class or function" if root.id in self.module_definitions else "object"
            self.add(
                "global_state",
                node,
                f"module-level {what} {root.id!r} is modified at run time (a counter, a result cache?): kernels "
                "keep no state",
            )

    @staticmethod
    def closes_over(owner: Scope, scope: Scope) -> bool:
        """Whether scope is a function (or lambda) nested in owner, not only a comprehension of owner's."""
        current: Scope | None = scope
        while current is not None and current is not owner:
            if isinstance(current.node, (ast.FunctionDef, ast.Lambda)):
                return True
            current = current.parent
        return False

    def visit_Subscript(self, node: ast.Subscript, scope: Scope) -> None:
        self.children(node, scope)
        key = node.slice
        if isinstance(key, ast.Constant) and isinstance(key.value, str) and key.value.startswith("__"):
            self.add("private_attribute", node, f"subscript {key.value!r}: dunder keys reach interpreter internals")
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            base: ast.expr = node.value
            while isinstance(base, (ast.Attribute, ast.Subscript)):
                base = base.value
            if isinstance(base, ast.Name):
                self.check_write(node, base, scope)

    def visit_Call(self, node: ast.Call, scope: Scope) -> None:
        func = node.func
        if (
            not scope.jit
            and isinstance(func, ast.Name)
            and func.id in ("str", "repr", "format")
            and self.find(func.id, scope) is None
            and any(names_device(a) for a in node.args)
        ):
            self.refuse_device_probe(node, scope)
        if isinstance(func, ast.Name) and func.id == "hasattr" and self.find("hasattr", scope) is None:
            self.direct_hasattr.add(id(func))
            self.check_hasattr(node)
        self.children(node, scope)
        for keyword in node.keywords:
            if keyword.arg and "hook" in keyword.arg.lower():
                self.add("forbidden_attribute", keyword.value, f"{keyword.arg}= installs a hook: not allowed")
        func = node.func
        if isinstance(func, ast.Attribute) and (func.attr in MUTATORS or is_inplace(func.attr)):
            base: ast.expr = func.value
            while isinstance(base, (ast.Attribute, ast.Subscript)):
                base = base.value
            if isinstance(base, ast.Name):
                owner = self.find(base.id, scope)
                if owner is None or not owner.imported.get(base.id):
                    self.check_write(node, base, scope)

    # kernels: inside a @triton.jit body only what Triton's language defines

    def is_jit_decorator(self, node: ast.expr, scope: Scope) -> bool:
        target = node.func if isinstance(node, ast.Call) else node
        return self.resolve(target, scope) is resolve_path("triton.jit")

    def kernel_name_ok(self, node: ast.Name, owner: Scope | None) -> bool:
        """A name read inside a kernel: the kernel's own parameters and locals, Triton's builtins, imports of
        triton / math (checked as chains), the candidate's module-level @triton.jit functions and
        NAME = tl.constexpr(...) globals. Triton's code generator reads nothing else; the interpreter reads any
        Python, so anything else can run differently in the CPU check than on the GPU."""
        name = node.id
        if owner is None:
            if name in KERNEL_BUILTINS:
                return True
            why = KERNEL_PROBES.get(name)
            if why is None:
                allowed = ", ".join(sorted(KERNEL_BUILTINS))
                why = f"{name!r} is not a builtin Triton's compiler defines for kernels (only {allowed})"
            self.add("kernel_allowlist", node, f"inside a @triton.jit kernel, {why}")
            return False
        if owner.jit:
            return True
        imported = owner.imported.get(name)
        if imported is not None:
            if kernel_import(imported.path):
                return True
            self.refuse_kernel_import(node, name, imported.path)
            return False
        if owner.kind == "module" and (name in self.kernel_names or name in self.constexpr_globals):
            return True
        self.add(
            "kernel_allowlist",
            node,
            f"a @triton.jit kernel reads {name!r}, which is neither its own, a @triton.jit function nor a module-level "
            f"NAME = tl.constexpr(...): Triton's compiler refuses other globals while the interpreter reads any Python "
            "object, so the CPU check and the GPU would run different code; pass it as an argument (tl.constexpr)",
        )
        return False

    def refuse_kernel_import(self, node: ast.expr, name: str, path: str) -> None:
        self.add(
            "kernel_allowlist",
            node,
            f"a @triton.jit kernel uses {name!r} ({path}): kernels may use triton.language (tl.*, libdevice) and math "
            "on constexprs only; anything else is Python that Triton's compiler evaluates at compile time on the GPU "
            "but the interpreter runs differently",
        )

    def refuse_libdevice(self, node: ast.AST, written: str) -> None:
        self.add(
            "kernel_allowlist",
            node,
            f"{written}: this libdevice function has no implementation under the Triton interpreter, where the "
            "CPU check runs kernels, so the kernel could not be verified (interp_libdevice implements the others: "
            "elementary functions, erf/erfc/erfcx, lgamma/tgamma, conversions, bit operations); use tl.* or an "
            "implemented libdevice function",
        )

    def check_kernel_chain(self, node: ast.Attribute, attrs: list[str], written: str) -> bool:
        """Attributes of values inside a kernel: members of Triton's language classes (tensor, dtype, constexpr,
        tuple, descriptors), never a tensor's .handle (an MLIR value compiled, a NumPy array interpreted)."""
        allowed = kernel_attributes()
        for attr in attrs:
            if attr.startswith("_"):
                return True  # private_attribute reports it
            if attr not in allowed:
                what = (
                    "a tensor's IR handle: an MLIR value when compiled for the GPU and a NumPy array under the "
                    "interpreter, so code that reads it can take a different path on the GPU than in the CPU check"
                    if attr == "handle"
                    else "not a member of Triton's language (tensor, dtype, constexpr, tuple)"
                )
                self.add("kernel_allowlist", node, f"inside a @triton.jit kernel, {written!r} reads {attr!r}: {what}")
                return False
        return True

    # device tests: what tells the CPU check (interpreter, CPU tensors) from a GPU run

    def device_probe(self, node: ast.AST, scope: Scope) -> str:
        """What node asks about the device ('' when nothing): torch.cuda.is_available / device_count, a tensor's
        is_cuda / is_cpu / get_device, a device's type / index (or any .type / .index read that is not a call with
        arguments, like x.type(torch.half)), a comparison with a device name or torch.device(...)."""
        if id(node) in self.device_checked:
            return ""
        if isinstance(node, ast.Compare):
            for operand in [node.left, *node.comparators]:
                if isinstance(operand, ast.Constant) and isinstance(operand.value, str):
                    if operand.value.split(":")[0] in DEVICE_NAMES:
                        return f"a comparison with the device name {operand.value!r}"
                if isinstance(operand, ast.Call) and self.resolve(operand.func, scope) is resolve_path("torch.device"):
                    return "a comparison with torch.device(...)"
            return ""
        if not isinstance(node, ast.Attribute):
            return ""
        root, attrs = chain_of(node)
        owner = self.find(root.id, scope) if isinstance(root, ast.Name) else None
        if owner is not None and root.id in owner.imported:
            obj = self.resolve(node, scope)
            queries = {id(resolve_path(p)) for p in DEVICE_QUERIES}
            return dotted(node) if obj is not MISSING and id(obj) in queries else ""
        for i, attr in enumerate(attrs):
            if attr in DEVICE_ATTRIBUTES:
                return f".{attr}"
            if attr in ("type", "index"):
                if i and attrs[i - 1] == "device":
                    return f".device.{attr}"
                parent = self.parents.get(id(node))
                called = isinstance(parent, ast.Call) and parent.func is node and (parent.args or parent.keywords)
                if i < len(attrs) - 1 or not called:
                    return f".{attr} (a device's type or index, or a tensor's type string)"
        return ""

    def refuse_device_probe(self, node: ast.AST, scope: Scope) -> None:
        what = self.device_probe(node, scope) if not isinstance(node, ast.FormattedValue) else "a device as text"
        self.device_checked.update(id(n) for n in ast.walk(node))
        self.add(
            "device_dispatch",
            node,
            f"{what or 'a device test'} tells the CPU check (the Triton interpreter, CPU tensors) from a GPU run: "
            "code that depends on it can launch, size or specialise kernels on the GPU in a way the check never ran. "
            "Allowed: `if x.is_cuda: n = torch.cuda.get_device_properties(x.device).multi_processor_count` "
            "`else: n = 4` (device properties on the GPU, a constant elsewhere), or choosing an allocation's device "
            "(`'cuda' if torch.cuda.is_available() else 'cpu'`)",
        )

    def device_idiom(self, node: ast.If | ast.IfExp, scope: Scope) -> None:
        """A device test that only reads device properties on the GPU (a constant elsewhere) or only picks a
        device name: its test's probes are allowed (marked checked). Others are refused where the probe is."""
        if scope.jit or not any(self.device_probe(n, scope) for n in ast.walk(node.test)):
            return
        if isinstance(node, ast.IfExp):
            pairs = [(node.body, node.orelse)]
        else:
            pairs = paired_assignments(node.body, node.orelse)
        if pairs and all(self.device_branches(a, b, scope) for a, b in pairs):
            self.device_checked.update(id(n) for n in ast.walk(node.test))

    def device_branches(self, a: ast.expr, b: ast.expr, scope: Scope) -> bool:
        if device_name(a) and device_name(b):
            return True
        return (self.device_property(a, scope) and numeric(b)) or (self.device_property(b, scope) and numeric(a))

    def device_property(self, node: ast.expr, scope: Scope) -> bool:
        """torch.cuda.get_device_properties(...).multi_processor_count, get_device_capability(...)[0], …: every
        call a device-property query (they raise on a machine without a GPU), at least one."""
        properties = {id(resolve_path(p)) for p in DEVICE_PROPERTIES}
        calls = [n for n in ast.walk(node) if isinstance(n, ast.Call)]
        allowed = (ast.Call, ast.Attribute, ast.Name, ast.Subscript, ast.Constant, ast.Load, ast.keyword)
        return (
            bool(calls)
            and all(id(self.resolve(c.func, scope)) in properties for c in calls)
            and all(isinstance(n, allowed) for n in ast.walk(node))
        )

    # decorators and bases

    def resolve(self, node: ast.expr, scope: Scope) -> Any:
        """The object a Name/Attribute chain names, when it is rooted at an import or a builtin."""
        root, attrs = chain_of(node) if isinstance(node, ast.Attribute) else (node, [])
        if not isinstance(root, ast.Name):
            return MISSING
        owner = self.find(root.id, scope)
        if owner is None:
            import builtins

            obj = getattr(builtins, root.id, MISSING) if root.id in self.allow.builtins else MISSING
        else:
            imported = owner.imported.get(root.id)
            obj = imported.obj if imported is not None else MISSING
        for attr in attrs:
            if obj is MISSING or attr.startswith("_"):
                return MISSING
            obj = lookup(obj, attr)
        return obj

    def check_decorator(self, node: ast.expr, scope: Scope) -> None:
        target = node.func if isinstance(node, ast.Call) else node
        obj = self.resolve(target, scope)
        if obj is MISSING or id(obj) not in self.allow.decorators:
            text = dotted(target) or ast.unparse(target)
            self.add(
                "decorator_allowlist",
                node,
                f"decorator {text!r} is not allowed (triton.jit/autotune/heuristics, staticmethod, classmethod, "
                "property, torch.no_grad)",
            )

    def check_base(self, node: ast.expr, scope: Scope) -> None:
        if isinstance(node, ast.Name) and node.id in self.module_classes and self.find(node.id, scope) is not None:
            return
        obj = self.resolve(node, scope)
        # nn.Module and autograd.Function subclasses. Not torch.Tensor: a subclass's methods run wherever the worker
        # reads a tensor the candidate handed it (the runtime guard refuses them as arguments, outputs and
        # gradients too, for when this layer is off).
        bases = tuple(resolve_path(p) for p in ("torch.nn.Module", "torch.autograd.Function"))
        if obj is object or (isinstance(obj, type) and id(obj) in self.allow.objects and issubclass(obj, bases)):
            return
        if isinstance(obj, type) and issubclass(obj, resolve_path("torch.Tensor")):
            self.add("object_allowlist", node, f"base class {ast.unparse(node)!r}: tensor subclasses are not allowed")
            return
        self.add("object_allowlist", node, f"base class {ast.unparse(node)!r} is not allowed")


# Inside a @triton.jit body: the builtins Triton's code generator defines for kernels (code_generator's
# builtin_namespace, less isinstance / hasattr / getattr, which it decides at compile time on IR values).
KERNEL_BUILTINS = frozenset({"range", "min", "max", "len", "int", "float", "print", "list"})
KERNEL_PROBES = {
    name: (
        f"{name}(...) is decided when the kernel is traced, on values that are IR objects when compiled for the GPU "
        "and NumPy-backed under the interpreter: the CPU check and the GPU can take different branches"
    )
    for name in (
        "hasattr",
        "isinstance",
        "getattr",
        "callable",
        "type",
        "id",
        "vars",
        "dir",
        "issubclass",
        "repr",
        "str",
    )
}
# Imports a kernel may use (chains are checked against allowed_objects as everywhere).
KERNEL_IMPORTS = ("triton", "math")
# A tensor's device names (comparing with one is a device test).
DEVICE_NAMES = frozenset({"cuda", "cpu", "mps", "xpu", "meta", "hip", "npu"})
DEVICE_ATTRIBUTES = frozenset({"is_cuda", "is_cpu", "is_mps", "is_xpu", "get_device"})
DEVICE_QUERIES = ("torch.cuda.is_available", "torch.cuda.device_count")
DEVICE_PROPERTIES = (
    "torch.cuda.get_device_properties",
    "torch.cuda.get_device_capability",
    "torch.cuda.get_device_name",
    "torch.cuda.current_device",
)


@functools.cache
def unrunnable_libdevice() -> frozenset[int]:
    """ids of the libdevice functions (both modules) interp_libdevice does not implement."""
    from foundry.evaluate.interp_libdevice import implemented

    found: set[int] = set()
    for path in ("triton.language.extra.libdevice", "triton.language.extra.cuda.libdevice"):
        module = resolve_path(path)
        if isinstance(module, types.ModuleType):
            found |= {
                id(v)
                for n, v in vars(module).items()
                if not n.startswith("_")
                and callable(v)
                and not isinstance(v, type)
                and n not in implemented()
                and native(v, "triton")
            }
    return frozenset(found)


def kernel_import(path: str) -> bool:
    return path.split(".")[0] in KERNEL_IMPORTS


@functools.cache
def kernel_attributes() -> frozenset[str]:
    """Public members of Triton's language classes and their instance fields, less the IR handle and builder
    entry points."""
    import triton.language as tl

    classes = [tl.tensor, tl.dtype, tl.pointer_type, tl.block_type, tl.constexpr, tl.tuple, tl.tuple_type]
    classes += [tl.core.base_value, tl.core.base_type]
    classes += [getattr(tl, n) for n in ("tensor_descriptor", "tensor_descriptor_base", "slice") if hasattr(tl, n)]
    names = {n for c in classes for n in dir(c) if not n.startswith("_")}
    names |= {
        "type", "dtype", "shape", "numel", "value", "element_ty", "primitive_bitwidth", "fp_mantissa_width",
        "exponent_bias", "int_signedness", "int_bitwidth", "address_space", "const", "values", "types", "fields",
        "base", "strides", "block_shape", "start", "stop", "step", "T",
    }  # fmt: skip
    return frozenset(names - {"handle", "to_ir"})


def names_device(node: ast.expr) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "device"


def device_name(node: ast.expr) -> bool:
    """'cuda', 'cpu', None, torch.device(...)-free device choices for an allocation."""
    if isinstance(node, ast.Constant):
        return node.value is None or (isinstance(node.value, str) and node.value.split(":")[0] in DEVICE_NAMES)
    return False


def numeric(node: ast.expr) -> bool:
    if isinstance(node, ast.Tuple):
        return all(numeric(e) for e in node.elts)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return numeric(node.operand)
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


def paired_assignments(body: list[ast.stmt], orelse: list[ast.stmt]) -> list[tuple[ast.expr, ast.expr]]:
    """(value in body, value in orelse) for each name both branches assign, when the branches are nothing but
    NAME = value statements assigning the same names; [] otherwise."""

    def assigned(stmts: list[ast.stmt]) -> dict[str, ast.expr] | None:
        out: dict[str, ast.expr] = {}
        for stmt in stmts:
            if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
                return None
            out[stmt.targets[0].id] = stmt.value
        return out

    a, b = assigned(body), assigned(orelse)
    if not a or not b or set(a) != set(b):
        return []
    return [(a[name], b[name]) for name in a]


# autograd.Function's torch.func extension points: documented, but the check never exercises them (it runs
# forward, backward and double backward), so a candidate may not define them: their output would be unverified.
UNCHECKED_EXTENSIONS = {
    "vmap": "the vmap rule (torch.func.vmap over the Function)",
    "jvp": "the forward-mode rule (torch.func.jvp / forward AD)",
    "generate_vmap_rule": "a generated vmap rule (torch.func.vmap over the Function)",
}

# Members of nn.Module / autograd.Function a candidate class may define.
OVERRIDABLE = frozenset({"__init__", "forward", "backward", "setup_context", "extra_repr", "reset_parameters"})


@functools.cache
def library_internals() -> frozenset[str]:
    """Every member name of nn.Module and autograd.Function (instances included): a candidate that defines or
    assigns one changes how the harness sees its state, calls or hooks."""
    import torch

    names = set(dir(torch.nn.Module)) | set(vars(torch.nn.Module()))
    names |= set(dir(torch.autograd.Function))
    return frozenset(names)


@functools.cache
def library_privates() -> frozenset[str]:
    """Every private name the code of the objects a candidate holds uses (tensors, kernels, autotuners, the
    interpreter's launchers): defining self._unsafe_update_src must not make kernel._unsafe_update_src usable."""
    import torch
    from triton.runtime import autotuner, interpreter, jit

    classes: list[type] = [torch.Tensor, torch.nn.Parameter, jit.JITFunction, autotuner.Autotuner]
    classes += [autotuner.Heuristics, interpreter.InterpretedFunction, interpreter.GridExecutor]
    names: set[str] = set()
    for cls in classes:
        for klass in cls.__mro__:
            names |= set(vars(klass))
            for value in vars(klass).values():
                code = getattr(inspect.unwrap(value) if callable(value) else value, "__code__", None)
                if code is not None:
                    names |= set(code.co_names)
    return frozenset(n for n in names if n.startswith("_") and not n.startswith("__"))


def is_inplace(attr: str) -> bool:
    """A torch in-place method (add_, copy_, fill_): one trailing underscore."""
    return attr.endswith("_") and not attr.endswith("__") and not attr.startswith("_")


# -- the candidate's structure -------------------------------------------------------------------------------


def method(cls: ast.ClassDef, name: str) -> ast.FunctionDef | None:
    for node in cls.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
    return None


def names_in(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def self_attributes(fn: ast.AST) -> set[str]:
    return {
        n.attr
        for n in ast.walk(fn)
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "self"
    }


Reached = tuple[ast.FunctionDef, ast.ClassDef | None]  # a function and the class whose method it is


class Structure:
    """What ModelNew.forward reaches: module functions and classes it names (directly, through local aliases,
    dicts or conditionals), methods of self, submodules built in __init__ (held directly or in nn.Sequential /
    nn.ModuleList), autograd.Function subclasses called through .apply. A kernel is launched when a reached
    function has a launch K[grid](...) whose K names it (directly or through a local or self alias)."""

    def __init__(self, tree: ast.Module, kernels: set[str]) -> None:
        self.functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
        self.classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
        self.kernels = kernels
        self.module_aliases = assignments(module_body(tree))

    def reachable(self, start: ast.FunctionDef, owner: ast.ClassDef) -> list[Reached]:
        order: list[Reached] = []
        todo: list[Reached] = [(start, owner)]
        seen: set[int] = set()
        while todo:
            fn, cls = todo.pop()
            if id(fn) in seen:
                continue
            seen.add(id(fn))
            order.append((fn, cls))
            referenced = names_in(fn)
            aliased = set(referenced)
            while aliased:  # counter = Counter() at module level: forward's counter.bump() reaches Counter
                for more in self.module_aliases.get(aliased.pop(), set()) - referenced:
                    referenced.add(more)
                    aliased.add(more)
            if cls is not None:
                for attr in self_attributes(fn):
                    target = method(cls, attr)
                    if target is not None:
                        todo.append((target, cls))
                    referenced |= self.assigned_to_self(cls, attr)
            for name in referenced:
                if name in self.functions:
                    todo.append((self.functions[name], None))
                elif name in self.classes:
                    sub = self.classes[name]
                    todo.extend((m, sub) for m in sub.body if isinstance(m, ast.FunctionDef) and m.name != "__init__")
        return order

    def assigned_to_self(self, cls: ast.ClassDef, attr: str) -> set[str]:
        """Names in the values assigned to self.attr anywhere in cls (submodules, kernel aliases)."""
        found: set[str] = set()
        for node in ast.walk(cls):
            if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Attribute) and t.attr == attr and dotted(t.value) == "self" for t in node.targets
            ):
                found |= names_in(node.value)
        return found

    def launched(self, fn: ast.FunctionDef, cls: ast.ClassDef | None, everywhere: set[str]) -> set[str]:
        """Kernels launched in fn. A launch through a parameter (a helper launcher given the kernel) counts
        every kernel the reached code names."""
        aliases = {**self.module_aliases}
        for name, values in assignments([fn]).items():
            aliases[name] = aliases.get(name, set()) | values
        params = parameters(fn.args)
        found: set[str] = set()
        for node in ast.walk(fn):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript):
                base = node.func.value
                names = names_in(base)
                if cls is not None:
                    for attr in self_attributes(base):
                        names |= self.assigned_to_self(cls, attr)
                closure = set(names)
                todo = list(names)
                while todo:
                    for more in aliases.get(todo.pop(), set()) - closure:
                        closure.add(more)
                        todo.append(more)
                found |= closure & self.kernels
                if closure & params:
                    found |= everywhere & self.kernels
        return found


def unpacked(targets: list[ast.expr]) -> Iterator[ast.expr]:
    for target in targets:
        if isinstance(target, (ast.Tuple, ast.List)):
            yield from unpacked(list(target.elts))
        elif isinstance(target, ast.Starred):
            yield from unpacked([target.value])
        else:
            yield target


def assignments(body: list[ast.stmt] | list[ast.FunctionDef]) -> dict[str, set[str]]:
    """name → the names in the values assigned to it (kernel = a if cond else b; KERNELS = {...})."""
    aliases: dict[str, set[str]] = {}
    for stmt in body:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    for name in (n.id for n in ast.walk(target) if isinstance(n, ast.Name)):
                        aliases.setdefault(name, set()).update(names_in(node.value))
    return aliases


def displayed(node: ast.expr) -> Iterator[ast.expr]:
    """node and the elements of the tuple, list, set or dict displays it is made of."""
    yield node
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        for element in node.elts:
            yield from displayed(element.value if isinstance(element, ast.Starred) else element)
    elif isinstance(node, ast.Dict):
        for element in node.values:
            yield from displayed(element)


def plain_default(node: ast.expr) -> bool:
    """A default that holds no state of its own: a constant, -constant, a name or a dotted name, a tuple of them."""
    if isinstance(node, ast.Constant) or dotted(node):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return isinstance(node.operand, ast.Constant)
    if isinstance(node, ast.Tuple):
        return all(plain_default(e) for e in node.elts)
    return False


def call_context(fn: ast.FunctionDef, cls: ast.ClassDef | None) -> str | None:
    """The ctx parameter of an autograd.Function's staticmethod forward/backward/setup_context: a fresh object
    per call, which the method may write (ctx.BLOCK = BLOCK)."""
    if cls is None or fn.name not in ("forward", "backward", "setup_context") or not fn.args.args:
        return None
    if not any(dotted(d) == "staticmethod" for d in fn.decorator_list):
        return None
    if not any(dotted(b).split(".")[-1] == "Function" for b in cls.bases):
        return None
    return fn.args.args[0].arg


def class_parameter(fn: ast.AST) -> str:
    """The cls of a @classmethod, '' for anything else."""
    if not isinstance(fn, ast.FunctionDef) or not fn.args.args:
        return ""
    return fn.args.args[0].arg if any(dotted(d) == "classmethod" for d in fn.decorator_list) else ""


def defaulted(fn: ast.AST) -> set[str]:
    """Parameters of a function or lambda whose default is not a constant (c=store): the default is that one
    object, shared by every call."""
    if not isinstance(fn, (ast.FunctionDef, ast.Lambda)):
        return set()
    defaults = fn.args.defaults
    positional = fn.args.posonlyargs + fn.args.args
    named = list(zip(positional[len(positional) - len(defaults) :], defaults, strict=True)) + list(
        zip(fn.args.kwonlyargs, fn.args.kw_defaults, strict=True)
    )
    return {a.arg for a, d in named if d is not None and not isinstance(d, ast.Constant)}


def aliases_of_state(fn: ast.FunctionDef) -> set[str]:
    """Locals of fn bound to an existing object by name (c = self.cache, k = ModelNew, out = x) and parameters
    whose default names one: writing through one writes that object, which outlives the call."""
    found = defaulted(fn)
    for node in ast.walk(fn):
        targets: list[ast.expr | None] = []
        if isinstance(node, ast.Assign) and any(names_object(part) for part in displayed(node.value)):
            targets = list(node.targets)
        elif isinstance(node, (ast.For, ast.comprehension)):
            targets = [node.target]  # a loop variable is an element of something that exists
        elif isinstance(node, ast.With):
            targets = [i.optional_vars for i in node.items]
        stored = (n for t in targets if t is not None for n in ast.walk(t))
        found |= {n.id for n in stored if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return found


def names_object(node: ast.expr) -> bool:
    """An expression that names an existing object rather than making one: a name, an attribute of one, an item
    of anything, d.get(key), or a choice between such (a if c else b, a or b)."""
    if isinstance(node, ast.IfExp):
        return names_object(node.body) or names_object(node.orelse)
    if isinstance(node, ast.BoolOp):
        return any(names_object(v) for v in node.values)
    if isinstance(node, ast.Subscript):
        return True  # an item of any container exists beyond this statement (list(d.values())[0])
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
        return True  # d.get(key): the value stored under key
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


def written_root(node: ast.expr) -> tuple[str, bool]:
    """(the name a write target hangs from, or '' when it hangs from no name; whether a call is on the way):
    self.cache()[0] → ('self', True), [a][0] → ('', False)."""
    called = False
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Starred, ast.Call)):
        if isinstance(node, ast.Call):
            if not isinstance(node.func, ast.Attribute):
                return "", True
            called = True
            node = node.func.value
        else:
            node = node.value
    return (node.id if isinstance(node, ast.Name) else ""), called


def root_name(node: ast.expr) -> str:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Starred)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else ""


def run_time_writes(fn: ast.FunctionDef, cls: ast.ClassDef | None) -> Iterator[Finding]:
    """Writes at run time (forward and what it reaches) that can outlive the call: an attribute set on anything
    but the call's own ctx (self's are self_mutations'), or a write through a local that names an existing
    object. Fresh locals (y = torch.empty(...); y[...] = ...) are fine."""
    ctx = call_context(fn, cls)
    aliases = aliases_of_state(fn)
    own = (bindings(fn.body) | parameters(fn.args)) - aliases - {"self"}  # x.view(-1)[i] = v writes a local
    for node in ast.walk(fn):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        elif isinstance(node, ast.Delete):
            targets = node.targets
        for target in unpacked(targets):
            root = root_name(target)
            written = ast.unparse(target)
            through, called = written_root(target)
            if isinstance(target, (ast.Attribute, ast.Subscript)) and (not through or (called and through not in own)):
                yield Finding(
                    "state_in_forward",
                    node.lineno,
                    f"{fn.name} writes into {written!r}, an object it did not name as its own local: state can "
                    "outlive the call",
                )
            elif isinstance(target, ast.Attribute) and root != ctx and not written.startswith("self."):
                yield Finding(
                    "state_in_forward",
                    node.lineno,
                    f"{fn.name} sets the attribute {written!r} at run time: only an autograd.Function's ctx takes new "
                    "attributes in forward and what it calls (state on any other object can outlive the call)",
                )
            elif isinstance(target, (ast.Attribute, ast.Subscript)) and root in aliases:
                yield Finding(
                    "state_in_forward",
                    node.lineno,
                    f"{fn.name} writes through {root!r}, another name for an existing object: state outlives the call",
                )
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            mutates = node.func.attr in MUTATORS or is_inplace(node.func.attr)
            through, called = written_root(node.func.value)
            if node.func.attr in MUTATORS and (not through or (called and through not in own)):
                yield Finding(
                    "state_in_forward",
                    node.lineno,
                    f"{fn.name} mutates {ast.unparse(node.func.value)!r}, an object it did not name as its own local",
                )
            elif mutates and root_name(node.func.value) in aliases:
                yield Finding(
                    "state_in_forward",
                    node.lineno,
                    f"{fn.name} mutates {ast.unparse(node.func.value)!r}, "
                    "another name for an existing object: state outlives the call",
                )


def self_mutations(fn: ast.FunctionDef) -> Iterator[Finding]:
    for node in ast.walk(fn):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        elif isinstance(node, ast.Delete):
            targets = node.targets
        for target in unpacked(targets):
            base = target
            while isinstance(base, ast.Subscript):
                base = base.value
            if isinstance(base, ast.Attribute) and dotted(base).startswith("self."):
                yield Finding("state_in_forward", node.lineno, f"forward stores state on {dotted(base)!r}")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner = dotted(node.func.value)
            attr = node.func.attr
            if owner.startswith("self.") and (attr in MUTATORS or is_inplace(attr)):
                yield Finding("state_in_forward", node.lineno, f"forward mutates {owner!r}")
            if owner == "self" and attr in {"register_buffer", "register_parameter", "register_module"}:
                yield Finding("state_in_forward", node.lineno, "forward registers new state")


class StaticGuard:
    def __init__(self, policy: GuardPolicy) -> None:
        unknown = sorted(set(policy.rules) - set(RULES))
        if unknown:
            raise RulesError(f"guard.yaml: unknown guard rule(s): {', '.join(unknown)}")
        missing = sorted(set(RULES) - set(policy.rules))
        if missing:
            raise RulesError(f"guard.yaml: rule(s) without a severity: {', '.join(missing)}")
        self.policy = policy
        self.allow = build_allowlist(policy)

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
        scan = Scan(self.allow, tree)
        yield from scan.run()
        yield from self.structure_rules(tree, scan)

    def structure_rules(self, tree: ast.Module, scan: Scan) -> Iterator[Finding]:
        scope = Scope("module", tree, None, bindings(module_body(tree)))
        scan.bind_imports(module_body(tree), scope)
        jit = resolve_path("triton.jit")
        kernels = {
            node.name
            for node in tree.body
            if isinstance(node, ast.FunctionDef)
            and any(scan.resolve(d.func if isinstance(d, ast.Call) else d, scope) is jit for d in node.decorator_list)
        }
        if not kernels:
            yield Finding("has_triton_kernel", 1, "no @triton.jit kernel is defined at module level")
        classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
        model = classes.get("ModelNew")
        if model is None:
            yield Finding("defines_model_new", 1, "no class ModelNew is defined at module level")
            return
        module_base = resolve_path("torch.nn.Module")
        for base in model.bases:
            own = isinstance(base, ast.Name) and base.id in classes and base.id not in REFERENCE_NAMES
            if not own and scan.resolve(base, scope) is not module_base:
                yield Finding(
                    "subclass_reference",
                    model.lineno,
                    f"ModelNew must derive from nn.Module, not {ast.unparse(base)!r}",
                )
        forward = method(model, "forward")
        if forward is None:
            yield Finding("forward_launches_kernel", model.lineno, "ModelNew has no forward method")
            return
        structure = Structure(tree, kernels)
        reached = structure.reachable(forward, model)
        everywhere = set().union(*(names_in(fn) for fn, _ in reached))
        if not set().union(*(structure.launched(fn, cls, everywhere) for fn, cls in reached)):
            yield Finding(
                "forward_launches_kernel",
                forward.lineno,
                "ModelNew.forward does not reach any kernel[grid](...) launch of a @triton.jit kernel",
            )
        for fn, cls in reached:
            if fn.name != "__init__":
                yield from self_mutations(fn)
                yield from run_time_writes(fn, cls)
