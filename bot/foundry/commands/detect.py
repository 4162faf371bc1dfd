"""`foundry detect [--base REV] [--head REV] [--repo DIR] [--json]`

New or changed operators in a git range, found by reading source (AST) and git — the repository's
code is never imported or run. Without --base, every operator at --head counts as new."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from foundry.core.errors import FatalError
from foundry.github.detect import detect
from foundry.github.gitrepo import GitRepo
from foundry.github.publish import branch_name


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "detect",
        help="new or changed operators in a git range",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--base", default=None, help="the revision to compare with (default: none, all new)")
    parser.add_argument("--head", default="HEAD", help="the revision to look at (default HEAD)")
    parser.add_argument("--repo", default=".", help="the git repository (default: the current directory)")
    parser.add_argument("--all", action="store_true", help="also list renamed, deleted and skipped entries")
    parser.add_argument("--json", action="store_true", help="print the detection as JSON on stdout")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    repo = Path(args.repo)
    if args.base and set(args.base) != {"0"} and GitRepo(repo).commit(args.base) is None:
        # The bot falls back to the first parent (a force push leaves it an unknown base); a user who named a
        # revision meant that one.
        raise FatalError(f"--base {args.base!r} is not a commit of the repository at {repo}")
    result = detect(repo, base=args.base, head=args.head)
    if result.note:
        print(f"note: {result.note}", file=sys.stderr)
    shown = result.operators if args.all else result.wanted
    # the branch a push of --head would propose on: named after the branch --head is (or is on)
    base = args.head if GitRepo(repo).ok("show-ref", "--verify", "--quiet", f"refs/heads/{args.head}") else None
    if base is None and GitRepo(repo).ok("symbolic-ref", "-q", "HEAD"):
        base = GitRepo(repo).run("symbolic-ref", "--short", "HEAD").strip()
    for op in shown:
        branch = branch_name(op.ref, base) if base else f"foundry/<base>/{op.slug}"
        print(f"{op.status:8} {op.ref}  (line {op.line}, branch {branch})", file=sys.stderr)
    if args.all:
        for skip in result.skipped:
            print(f"skipped  {skip.path}: {skip.reason}", file=sys.stderr)
    if not shown:
        print("no new or changed operators", file=sys.stderr)
    if args.json:
        print(result.model_dump_json(indent=2))
    return 0
