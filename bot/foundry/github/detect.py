"""Which operators a git range added or changed — by reading source (AST) and git, never by
importing or running the repository's code.

An operator is an `nn.Module` subclass. In a KernelBench-format file (a module-level `get_inputs`)
the operators are the module classes no other module class of the file uses (usually `Model`);
elsewhere, a module class is an operator only when .github/foundry.yml names it with input shapes.
Its fingerprint covers the class body, the module-level helpers it uses (transitively, imports
included) and the file's input declarations, so a comment or a change elsewhere in the file is not
a change of the operator.
"""

from __future__ import annotations

import ast
import hashlib
import logging
import re
from pathlib import Path, PurePosixPath
from typing import Literal

from pydantic import BaseModel, ConfigDict

from foundry.github.config import CONFIG_PATH, ConfigError, FoundryConfig, parse_config
from foundry.github.events import valid_operator
from foundry.github.gitrepo import GitError, GitRepo

log = logging.getLogger(__name__)

INPUT_DECLARATIONS = (
    "get_inputs",
    "get_init_inputs",
    "get_cpu_inputs",
    "get_cpu_init_inputs",
    "get_shape_variants",
    "get_cpu_shape_variants",
)
# what the optimizer reads from any operator's file (spec/loader.py), whether its inputs come from it or the config
OPERATOR_DECLARATIONS = ("FOUNDRY_PRECISION", "FOUNDRY_HYBRID_OPS", "FOUNDRY_TRAINING")
MODULE_BASES = {"nn.Module", "torch.nn.Module", "Module"}

Status = Literal["added", "changed", "renamed", "deleted", "unchanged"]


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class DetectedOperator(_Record):
    ref: str  # path.py for Model, path.py::Class otherwise
    path: str
    class_name: str
    slug: str
    status: Status
    previous_path: str | None = None
    kernelbench: bool
    line: int
    fingerprint: str

    @property
    def wanted(self) -> bool:
        return self.status in ("added", "changed")


class SkippedFile(_Record):
    path: str
    reason: str


class Detection(_Record):
    base: str | None  # the commit compared against; None: nothing (first push)
    head: str
    note: str = ""  # how the base was chosen when the one given could not be used
    operators: tuple[DetectedOperator, ...] = ()
    skipped: tuple[SkippedFile, ...] = ()

    @property
    def wanted(self) -> tuple[DetectedOperator, ...]:
        return tuple(op for op in self.operators if op.wanted)


def slugify(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "operator"


def operator_ref(path: str, class_name: str) -> str:
    return path if class_name == "Model" else f"{path}::{class_name}"


def operator_slug(ref: str) -> str:
    """Stable per operator: branch foundry/<slug>. ops/fused_gelu.py::Block → ops-fused-gelu-block."""
    path, _, cls = ref.partition("::")
    stem = path[:-3] if path.endswith(".py") else path
    slug = slugify(stem)
    if cls and cls != "Model":
        slug += "-" + slugify(cls)
    return slug[:80].strip("-")


def _module_bases(tree: ast.Module) -> set[str]:
    """How this file spells torch.nn.Module: the usual names plus its own import aliases
    (`import torch.nn as tnn` → `tnn.Module`, `from torch.nn import Module as M` → `M`)."""
    names = set(MODULE_BASES)
    for node in tree.body:
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname and a.name == "torch":
                    names.add(f"{a.asname}.nn.Module")
                elif a.asname and a.name == "torch.nn":
                    names.add(f"{a.asname}.Module")
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            for a in node.names:
                bound = a.asname or a.name
                if node.module == "torch" and a.name == "nn":
                    names.add(f"{bound}.Module")
                elif node.module in ("torch.nn", "torch.nn.modules", "torch.nn.modules.module") and a.name == "Module":
                    names.add(bound)
    return names


class _FileOperators:
    """The operators of one source text, with fingerprints."""

    def __init__(self, source: str) -> None:
        self.tree = ast.parse(source)
        self.defs: dict[str, list[ast.stmt]] = {}
        for node in self.tree.body:
            for name in _defined_names(node):
                self.defs.setdefault(name, []).append(node)
        self.kernelbench = "get_inputs" in self.defs
        self.bases = _module_bases(self.tree)
        self.module_classes = self._module_classes()

    def link(self, sources: _Revision, path: str) -> None:
        """Module classes whose base is a module class of another file of the repository (`from ops.base import
        Base`, `class Model(Base)`), followed through re-exports and chains of files; read from git like the rest.
        The fingerprint already follows that import, so a change of the base file is a change of the operator."""
        local = {n.name for n in self.tree.body if isinstance(n, ast.ClassDef)}
        found: set[str] = set()
        for node in self.tree.body:
            if not isinstance(node, ast.ClassDef) or node.name in self.module_classes:
                continue
            for base in node.bases:
                dotted = _dotted(base)
                if dotted and dotted[0] not in local and sources.is_module_class(path, dotted, set()):
                    found.add(ast.unparse(base))
        if found - self.bases:
            self.bases |= found
            self.module_classes = self._module_classes()

    def unrecognized(self) -> list[str]:
        """Classes that are not module classes, as `Name(Base, …)`: the reason an expected operator is missing."""
        return [
            f"{n.name}({', '.join(ast.unparse(b) for b in n.bases)})"
            for n in self.tree.body
            if isinstance(n, ast.ClassDef) and n.name not in self.module_classes and n.bases
        ]

    def _module_classes(self) -> dict[str, ast.ClassDef]:
        classes = {n.name: n for n in self.tree.body if isinstance(n, ast.ClassDef)}
        found: dict[str, ast.ClassDef] = {}
        changed = True
        while changed:
            changed = False
            for name, node in classes.items():
                if name in found:
                    continue
                bases = {ast.unparse(b) for b in node.bases}
                if bases & self.bases or bases & set(found):
                    found[name] = node
                    changed = True
        return found

    def roots(self) -> list[str]:
        """Module classes no other module class of the file refers to."""
        used: set[str] = set()
        for name, node in self.module_classes.items():
            used |= {n for n in _names_used(node) if n in self.module_classes and n != name}
        return [n for n in self.module_classes if n not in used]

    def closure(self, roots: set[str], skip: str = "") -> tuple[list[str], list[tuple[ast.stmt, str]]]:
        """The module-level statements roots use, transitively: their source, and the imports among them
        with the name each binds."""
        seen: set[str] = set()
        pending = set(roots)
        chunks: list[str] = []
        imports: list[tuple[ast.stmt, str]] = []
        while pending:
            name = pending.pop()
            if name in seen or name == skip or name not in self.defs:
                continue
            seen.add(name)
            for stmt in self.defs[name]:
                chunks.append(ast.unparse(stmt))
                if isinstance(stmt, ast.Import | ast.ImportFrom):
                    imports.append((stmt, name))
                else:
                    pending |= _names_used(stmt)
                    imports += _nested_imports(stmt)
        return chunks, imports

    def fingerprint(self, class_name: str, sources: _Revision | None = None, path: str = "") -> str:
        """The class, what it uses in its file and (with sources) what it imports from other files of the
        repository, so that a change in a helper file is a change of the operator."""
        node = self.module_classes[class_name]
        roots = set(_names_used(node)) | {d for d in OPERATOR_DECLARATIONS if d in self.defs}
        if self.kernelbench:
            roots |= {d for d in INPUT_DECLARATIONS if d in self.defs}
        chunks, imports = self.closure(roots, skip=class_name)
        imports += _nested_imports(node)
        imported = sorted(set(sources.imported(path, imports, set()))) if sources is not None else []
        digest = hashlib.sha256("\n".join(sorted(set(chunks)) + [ast.unparse(node)] + imported).encode())
        return digest.hexdigest()[:16]


class _Revision:
    """The repository's Python files at one commit, read from git (never imported), for following imports."""

    def __init__(self, repo: GitRepo, rev: str) -> None:
        self.repo = repo
        self.rev = rev
        self.paths = {p for p in repo.files(rev) if p.endswith(".py")}
        self._parsed: dict[str, _FileOperators | None] = {}

    def parsed(self, path: str) -> _FileOperators | None:
        if path not in self._parsed:
            info = _analyse(self.repo.show(self.rev, path)) if path in self.paths else None
            self._parsed[path] = info if isinstance(info, _FileOperators) else None
            if isinstance(info, _FileOperators):
                info.link(self, path)  # after caching it: files whose imports go round see it as it is so far
        return self._parsed[path]

    def is_module_class(self, path: str, dotted: tuple[str, ...], visited: set[tuple[str, tuple[str, ...]]]) -> bool:
        """Whether `a.b.Name`, as the file at path spells it, is a module class of a file of the repository."""
        info = self.parsed(path)
        if info is None or (path, dotted) in visited:
            return False
        visited.add((path, dotted))
        head, rest = dotted[0], dotted[1:]
        if not rest and head in info.module_classes:
            return True
        for stmt in info.tree.body:
            if isinstance(stmt, ast.ImportFrom):
                for alias in stmt.names:
                    if (alias.asname or alias.name) != head:
                        continue
                    source = self.module_file(stmt.module, stmt.level, path)
                    if source is not None and self.is_module_class(source, (alias.name, *rest), visited):
                        return True
                    sub = f"{stmt.module}.{alias.name}" if stmt.module else alias.name
                    source = self.module_file(sub, stmt.level, path)  # from ops import base; base.Base
                    if source is not None and rest and self.is_module_class(source, rest, visited):
                        return True
            elif isinstance(stmt, ast.Import):
                for alias in stmt.names:
                    parts = tuple(alias.name.split("."))
                    if alias.asname == head:  # import ops.base as b; b.Base
                        source, inner = self.module_file(alias.name, 0, path), rest
                    elif alias.asname is None and dotted[: len(parts)] == parts:  # import ops.base; ops.base.Base
                        source, inner = self.module_file(alias.name, 0, path), dotted[len(parts) :]
                    else:
                        continue
                    if source is not None and inner and self.is_module_class(source, inner, visited):
                        return True
        return False

    def module_file(self, module: str | None, level: int, importer: str) -> str | None:
        """The repository file an import names (`a.b` → a/b.py or a/b/__init__.py, from the root or, as a
        script's own directory on sys.path, from the importer's directory); None when it is not in the repo."""
        here = PurePosixPath(importer).parent
        parts = module.split(".") if module else []
        if level > 0:
            bases = [here.parents[level - 2] if level > 1 and len(here.parents) >= level - 1 else here]
        else:
            bases = [PurePosixPath(""), here]
        for base in bases:
            stem = base.joinpath(*parts) if parts else base
            for candidate in (f"{stem}.py", f"{stem}/__init__.py"):
                candidate = candidate.removeprefix("./")
                if candidate in self.paths:
                    return candidate
        return None

    def imported(self, importer: str, imports: list[tuple[ast.stmt, str]], visited: set[str]) -> list[str]:
        """Source of what the imports bring in from the repository (the names used, transitively)."""
        chunks: list[str] = []
        for stmt, bound in imports:
            if isinstance(stmt, ast.ImportFrom):
                for alias in stmt.names:
                    if (alias.asname or alias.name) != bound:
                        continue
                    chunks += self._name_from(stmt.module, stmt.level, alias.name, importer, visited)
            elif isinstance(stmt, ast.Import):
                for alias in stmt.names:
                    if (alias.asname or alias.name.split(".")[0]) == bound:
                        chunks += self._whole(self.module_file(alias.name, 0, importer), visited)
        return chunks

    def _name_from(self, module: str | None, level: int, name: str, importer: str, visited: set[str]) -> list[str]:
        path = self.module_file(module, level, importer)
        info = self.parsed(path) if path else None
        if path is None or info is None or name not in info.defs:  # perhaps a submodule: from pkg import mod
            sub = f"{module}.{name}" if module else name
            return self._whole(self.module_file(sub, level, importer), visited)
        key = f"{path}::{name}"
        if key in visited:
            return []
        visited.add(key)
        chunks, imports = info.closure({name})
        return [f"# {key}", *chunks, *self.imported(path, imports, visited)]

    def _whole(self, path: str | None, visited: set[str]) -> list[str]:
        info = self.parsed(path) if path else None
        if path is None or info is None or path in visited:
            return []
        visited.add(path)
        imports = [
            (s, n) for s in info.tree.body if isinstance(s, ast.Import | ast.ImportFrom) for n in _defined_names(s)
        ]
        return [f"# {path}", ast.unparse(info.tree), *self.imported(path, imports, visited)]

    def importers(self, changed: set[str], config: FoundryConfig) -> set[str]:
        """Files config wants that import one of changed, directly or through other files (every file of the
        repository, since a chain of imports may pass through files the config does not include)."""
        graph: dict[str, set[str]] = {}
        for path in self.paths:
            info = self.parsed(path)
            if info is None:
                continue
            for node in ast.walk(info.tree):
                if isinstance(node, ast.ImportFrom):
                    targets = [self.module_file(node.module, node.level, path)]
                    targets += [
                        self.module_file(f"{node.module}.{a.name}" if node.module else a.name, node.level, path)
                        for a in node.names
                    ]
                elif isinstance(node, ast.Import):
                    targets = [self.module_file(a.name, 0, path) for a in node.names]
                else:
                    continue
                for target in targets:
                    if target is not None and target != path:
                        graph.setdefault(target, set()).add(path)
        found: set[str] = set()
        pending = list(changed)
        while pending:
            for importer in graph.get(pending.pop(), ()):
                if importer not in found:
                    found.add(importer)
                    pending.append(importer)
        return {p for p in found if config.wants(p)}


def _defined_names(node: ast.stmt) -> list[str]:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [node.name]
    if isinstance(node, ast.Assign):
        return [n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)]
    if isinstance(node, ast.AnnAssign | ast.AugAssign) and isinstance(node.target, ast.Name):
        return [node.target.id]
    if isinstance(node, ast.Import | ast.ImportFrom):
        return [(a.asname or a.name).split(".")[0] for a in node.names if a.name != "*"]
    return []


def _nested_imports(node: ast.stmt) -> list[tuple[ast.stmt, str]]:
    """Imports inside a class or function body (`from ops.helpers import scale` in forward), each with the name
    it binds: what they bring in from the repository is part of the operator as much as a module-level import."""
    return [
        (n, name)
        for n in ast.walk(node)
        if n is not node and isinstance(n, ast.Import | ast.ImportFrom)
        for name in _defined_names(n)
    ]


def _dotted(node: ast.expr) -> tuple[str, ...]:
    """`a.b.Name` as ("a", "b", "Name"); () for anything else (a call, a subscript)."""
    if isinstance(node, ast.Name):
        return (node.id,)
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return (*inner, node.attr) if inner else ()
    return ()


def _linked(info: _FileOperators | SyntaxError | None, sources: _Revision | None, path: str):  # noqa: ANN202
    if isinstance(info, _FileOperators) and sources is not None:
        info.link(sources, path)
    return info


def _names_used(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _analyse(source: str | None) -> _FileOperators | SyntaxError | None:
    if source is None:
        return None
    try:
        return _FileOperators(source)
    except SyntaxError as exc:
        return exc
    except (ValueError, RecursionError) as exc:  # null bytes, absurd nesting
        return SyntaxError(str(exc))


def _candidates(info: _FileOperators, path: str, config: FoundryConfig) -> list[str]:
    named = {
        ref.partition("::")[2] or "Model"
        for ref, settings in config.operators.items()
        if ref.partition("::")[0] == path and settings.inputs is not None
    }
    names = set(info.roots()) if info.kernelbench else set()
    return sorted(n for n in names | named if n in info.module_classes)


def detect(
    repo_root: Path,
    *,
    base: str | None,
    head: str = "HEAD",
    config: FoundryConfig | None = None,
) -> Detection:
    repo = GitRepo(repo_root)
    head_sha = repo.commit(head)
    if head_sha is None:
        raise GitError(f"head revision {head!r} is not a commit of {repo_root}")
    if config is None:
        config = parse_config(repo.show(head_sha, CONFIG_PATH), source=f"{CONFIG_PATH} at {head_sha[:12]}")

    note = ""
    base_sha = repo.commit(base) if base else None
    if base and base_sha is None and set(base) != {"0"}:
        base_sha = repo.first_parent(head_sha)
        note = f"base {base[:12]} is not in this repository (force push or shallow clone); " + (
            f"compared with the first parent {base_sha[:12]}" if base_sha else "treated every file as new"
        )
        log.warning(note)
    elif base_sha is None:
        note = "no base (first push): every operator is new"

    if base_sha is None:
        changes: list[tuple[str, str | None, str]] = [("A", None, p) for p in repo.files(head_sha)]
    else:
        changes = repo.diff(base_sha, head_sha)
    after_rev = _Revision(repo, head_sha)
    before_rev = _Revision(repo, base_sha) if base_sha else None
    old_config = _config_before(repo, base_sha, changes, config)

    operators: list[DetectedOperator] = []
    skipped: list[SkippedFile] = []
    handled: set[str] = set()
    for status, old_path, path in changes:
        if not path.endswith(".py"):
            continue
        handled.add(path)
        if not config.wants(path) and not (old_path and config.wants(old_path)):
            continue
        if not valid_operator(path):
            skipped.append(SkippedFile(path=path, reason="a file name Kernel Foundry does not handle"))
            continue
        old_rev_path = old_path or path
        before = _analyse(repo.show(base_sha, old_rev_path) if base_sha and status != "A" else None)
        after = _analyse(repo.show(head_sha, path) if status != "D" else None)
        before, after = _linked(before, before_rev, old_rev_path), _linked(after, after_rev, path)
        if isinstance(after, SyntaxError):
            skipped.append(SkippedFile(path=path, reason=f"syntax error at line {after.lineno}: {after.msg}"))
            continue
        if isinstance(before, SyntaxError):
            before = None
        if status == "D":
            if before is not None:
                for cls in _candidates(before, old_rev_path, config):
                    ref = operator_ref(old_rev_path, cls)
                    operators.append(_op(before, old_rev_path, cls, "deleted", None, ref, before_rev))
            continue
        assert after is not None
        found = _candidates(after, path, config)
        if not found and (after.module_classes or after.kernelbench):
            skipped.append(SkippedFile(path=path, reason=_no_operator_reason(after)))
        skipped += _named_but_unrecognized(after, path, config)
        for cls in found:
            ref = operator_ref(path, cls)
            if config.settings_for(ref).skip:
                skipped.append(SkippedFile(path=path, reason=f"{ref}: skip: true in .github/foundry.yml"))
                continue
            fp = after.fingerprint(cls, after_rev, path)
            old_fp = (
                before.fingerprint(cls, before_rev, old_rev_path)
                if before is not None and cls in before.module_classes
                else None
            )
            if old_fp is None:
                state: Status = "added"
            elif old_fp != fp or _reconfigured(ref, old_config, config):
                state = "changed"
            elif old_path and old_path != path:
                state = "renamed"
            else:
                state = "unchanged"
            if state != "unchanged":
                operators.append(_op(after, path, cls, state, old_path if old_path != path else None, ref, after_rev))
        if before is not None and old_path is None:
            for cls in _candidates(before, path, config):
                if cls not in after.module_classes:
                    operators.append(_op(before, path, cls, "deleted", None, operator_ref(path, cls), before_rev))

    if before_rev is not None:
        # files the diff did not touch: an operator changes with a helper it imports from another file, and
        # with its settings when only .github/foundry.yml changed
        changed_py = {p for _, old, p in changes if p.endswith(".py")} | {o for _, o, _ in changes if o}
        again = after_rev.importers(changed_py, config) if changed_py else set()
        if old_config is not None:
            again |= {p for p in after_rev.paths if config.wants(p)}
        for path in sorted(again - handled):
            operators += _recheck_unchanged_file(path, before_rev, after_rev, old_config or config, config)
            info = after_rev.parsed(path)
            skipped += _named_but_unrecognized(info, path, config) if info is not None else []
    return Detection(base=base_sha, head=head_sha, note=note, operators=tuple(operators), skipped=tuple(skipped))


def _config_before(
    repo: GitRepo, base: str | None, changes: list[tuple[str, str | None, str]], config: FoundryConfig
) -> FoundryConfig | None:
    """The config at base when the range changed it (an invalid or missing one counts as the defaults)."""
    if base is None or not any(CONFIG_PATH in (p, o) for _, o, p in changes):
        return None
    try:
        old = parse_config(repo.show(base, CONFIG_PATH), source=f"{CONFIG_PATH} at {base[:12]}")
    except ConfigError:
        old = FoundryConfig()
    return old if old != config else None


# what the optimizer sees of an operator's settings (labels do not change a kernel; skip is handled apart)
_OPTIMIZER_SETTINGS = {"budget", "writer", "policy", "dtype", "precision", "inputs", "training"}


def _reconfigured(ref: str, old: FoundryConfig | None, new: FoundryConfig) -> bool:
    if old is None:
        return False
    before = old.settings_for(ref).model_dump(include=_OPTIMIZER_SETTINGS)
    return before != new.settings_for(ref).model_dump(include=_OPTIMIZER_SETTINGS)


def _recheck_unchanged_file(
    path: str, before_rev: _Revision, after_rev: _Revision, old_config: FoundryConfig, config: FoundryConfig
) -> list[DetectedOperator]:
    """The operators of a file the range did not change whose imports or settings changed."""
    after, before = after_rev.parsed(path), before_rev.parsed(path)
    if after is None or not valid_operator(path):
        return []
    old_candidates = (
        set(_candidates(before, path, old_config)) if before is not None and old_config.wants(path) else set()
    )
    found: list[DetectedOperator] = []
    for cls in _candidates(after, path, config):
        ref = operator_ref(path, cls)
        if config.settings_for(ref).skip:
            continue
        if cls not in old_candidates or old_config.settings_for(ref).skip:
            state: Status = "added"  # newly named or included by the config
        elif before is not None and (
            before.fingerprint(cls, before_rev, path) != after.fingerprint(cls, after_rev, path)
            or _reconfigured(ref, old_config, config)
        ):
            state = "changed"
        else:
            continue
        found.append(_op(after, path, cls, state, None, ref, after_rev))
    return found


def _named_but_unrecognized(info: _FileOperators, path: str, config: FoundryConfig) -> list[SkippedFile]:
    """Classes .github/foundry.yml names with inputs that the file does not hold as module classes: without
    this they would vanish from the plan with no word said."""
    skipped = []
    for ref, settings in config.operators.items():
        file, _, cls = ref.partition("::")
        cls = cls or "Model"
        if file != path or settings.inputs is None or settings.skip or cls in info.module_classes:
            continue
        node = next((n for n in info.tree.body if isinstance(n, ast.ClassDef) and n.name == cls), None)
        why = (
            f"no class {cls} in the file"
            if node is None
            else f"{cls}({', '.join(ast.unparse(b) for b in node.bases)}) is not recognized as torch.nn.Module: "
            "derive from nn.Module, torch.nn.Module or an alias this file imports, or a module class of this repository"
        )
        skipped.append(SkippedFile(path=path, reason=f"{ref}: named in .github/foundry.yml, but {why}"))
    return skipped


def _no_operator_reason(info: _FileOperators) -> str:
    if info.kernelbench and not info.module_classes:
        classes = info.unrecognized()
        if classes:
            return (
                f"get_inputs() but no class recognized as torch.nn.Module ({', '.join(classes[:3])}): "
                "derive from nn.Module, torch.nn.Module or an alias this file imports, "
                "or a module class of this repository"
            )
        return "get_inputs() but no nn.Module class"
    return "nn.Module classes but no get_inputs() and no inputs in .github/foundry.yml"


def fingerprint_at(repo_root: Path, head: str, ref: str) -> str | None:
    """The operator's fingerprint at a commit, read from git (None when it is not there)."""
    path, _, cls = ref.partition("::")
    repo = GitRepo(repo_root)
    sources = _Revision(repo, head)
    info = _linked(_analyse(repo.show(head, path)), sources, path)
    name = cls or "Model"
    if not isinstance(info, _FileOperators) or name not in info.module_classes:
        return None
    return info.fingerprint(name, sources, path)


def _op(
    info: _FileOperators, path: str, cls: str, status: Status, previous: str | None, ref: str, sources: _Revision | None
) -> DetectedOperator:
    return DetectedOperator(
        ref=ref,
        path=path,
        class_name=cls,
        slug=operator_slug(ref),
        status=status,
        previous_path=previous,
        kernelbench=info.kernelbench,
        line=info.module_classes[cls].lineno,
        fingerprint=info.fingerprint(cls, sources, path),
    )
