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
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from foundry.github.config import CONFIG_PATH, FoundryConfig, parse_config
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
    "FOUNDRY_PRECISION",
    "FOUNDRY_HYBRID_OPS",
)
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


class _FileOperators:
    """The operators of one source text, with fingerprints."""

    def __init__(self, source: str) -> None:
        self.tree = ast.parse(source)
        self.defs: dict[str, list[ast.stmt]] = {}
        for node in self.tree.body:
            for name in _defined_names(node):
                self.defs.setdefault(name, []).append(node)
        self.kernelbench = "get_inputs" in self.defs
        self.module_classes = self._module_classes()

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
                if bases & MODULE_BASES or bases & set(found):
                    found[name] = node
                    changed = True
        return found

    def roots(self) -> list[str]:
        """Module classes no other module class of the file refers to."""
        used: set[str] = set()
        for name, node in self.module_classes.items():
            used |= {n for n in _names_used(node) if n in self.module_classes and n != name}
        return [n for n in self.module_classes if n not in used]

    def fingerprint(self, class_name: str) -> str:
        node = self.module_classes[class_name]
        seen: set[str] = set()
        pending = set(_names_used(node))
        if self.kernelbench:
            pending |= {d for d in INPUT_DECLARATIONS if d in self.defs}
        chunks = [ast.unparse(node)]
        while pending:
            name = pending.pop()
            if name in seen or name == class_name or name not in self.defs:
                continue
            seen.add(name)
            for stmt in self.defs[name]:
                chunks.append(ast.unparse(stmt))
                if not isinstance(stmt, ast.Import | ast.ImportFrom):
                    pending |= _names_used(stmt)
        digest = hashlib.sha256("\n".join(sorted(set(chunks[1:])) + chunks[:1]).encode())
        return digest.hexdigest()[:16]


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

    operators: list[DetectedOperator] = []
    skipped: list[SkippedFile] = []
    for status, old_path, path in changes:
        if not path.endswith(".py"):
            continue
        if not config.wants(path) and not (old_path and config.wants(old_path)):
            continue
        if not valid_operator(path):
            skipped.append(SkippedFile(path=path, reason="a file name Kernel Foundry does not handle"))
            continue
        old_rev_path = old_path or path
        before = _analyse(repo.show(base_sha, old_rev_path) if base_sha and status != "A" else None)
        after = _analyse(repo.show(head_sha, path) if status != "D" else None)
        if isinstance(after, SyntaxError):
            skipped.append(SkippedFile(path=path, reason=f"syntax error at line {after.lineno}: {after.msg}"))
            continue
        if isinstance(before, SyntaxError):
            before = None
        if status == "D":
            if before is not None:
                for cls in _candidates(before, old_rev_path, config):
                    ref = operator_ref(old_rev_path, cls)
                    operators.append(_op(before, old_rev_path, cls, "deleted", None, ref))
            continue
        assert after is not None
        found = _candidates(after, path, config)
        if not found and after.module_classes:
            skipped.append(
                SkippedFile(
                    path=path,
                    reason="nn.Module classes but no get_inputs() and no inputs in .github/foundry.yml",
                )
            )
        for cls in found:
            ref = operator_ref(path, cls)
            if config.settings_for(ref).skip:
                skipped.append(SkippedFile(path=path, reason=f"{ref}: skip: true in .github/foundry.yml"))
                continue
            fp = after.fingerprint(cls)
            old_fp = before.fingerprint(cls) if before is not None and cls in before.module_classes else None
            if old_fp is None:
                state: Status = "added"
            elif old_fp != fp:
                state = "changed"
            elif old_path and old_path != path:
                state = "renamed"
            else:
                state = "unchanged"
            if state != "unchanged":
                operators.append(_op(after, path, cls, state, old_path if old_path != path else None, ref))
        if before is not None and old_path is None:
            for cls in _candidates(before, path, config):
                if cls not in after.module_classes:
                    operators.append(_op(before, path, cls, "deleted", None, operator_ref(path, cls)))
    return Detection(base=base_sha, head=head_sha, note=note, operators=tuple(operators), skipped=tuple(skipped))


def fingerprint_at(repo_root: Path, head: str, ref: str) -> str | None:
    """The operator's fingerprint at a commit, read from git (None when it is not there)."""
    path, _, cls = ref.partition("::")
    info = _analyse(GitRepo(repo_root).show(head, path))
    name = cls or "Model"
    if not isinstance(info, _FileOperators) or name not in info.module_classes:
        return None
    return info.fingerprint(name)


def _op(info: _FileOperators, path: str, cls: str, status: Status, previous: str | None, ref: str) -> DetectedOperator:
    return DetectedOperator(
        ref=ref,
        path=path,
        class_name=cls,
        slug=operator_slug(ref),
        status=status,
        previous_path=previous,
        kernelbench=info.kernelbench,
        line=info.module_classes[cls].lineno,
        fingerprint=info.fingerprint(cls),
    )
