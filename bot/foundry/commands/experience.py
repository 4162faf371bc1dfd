"""`foundry experience stats|top|export FILE|import FILE [--db PATH] [--json]`

The experience library: statistics; the best kernels and most useful hints; export to one Parquet file;
import such a file (merges idempotently; records keep their origin repository).
The library is FOUNDRY_EXPERIENCE_DB, else ~/.cache/kernel-foundry/experience.duckdb, unless --db."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from foundry.core.errors import FatalError

if TYPE_CHECKING:
    from foundry.experience import ExperienceStore


def add_parser(sub: argparse._SubParsersAction) -> None:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--db",
        metavar="PATH",
        default=None,
        help="library file (default: $FOUNDRY_EXPERIENCE_DB, else ~/.cache/kernel-foundry/experience.duckdb)",
    )
    common.add_argument("--json", action="store_true", help="print the result as JSON on stdout")
    parser = sub.add_parser("experience", help="inspect, export and merge the experience library",
                            description=__doc__)  # fmt: skip
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    actions.add_parser("stats", parents=[common], help="counts of runs, candidates, hints, best kernels")
    top = actions.add_parser("top", parents=[common], help="the best kernels and the most useful hints")
    top.add_argument("-n", type=int, default=10, help="entries per list (default 10)")
    export = actions.add_parser("export", parents=[common], help="write the library to a Parquet file")
    export.add_argument("file", type=Path)
    imp = actions.add_parser("import", parents=[common], help="merge a Parquet export into the library")
    imp.add_argument("file", type=Path)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from foundry.experience import ExperienceStore

    store = ExperienceStore(args.db)
    handler = {"stats": stats, "top": top, "export": export, "import": import_}[args.action]
    return handler(store, args)


def stats(store: ExperienceStore, args: argparse.Namespace) -> int:
    from foundry.experience.summary import library_stats

    result = library_stats(store)
    if args.json:
        print(result.model_dump_json(indent=2))
        return 0
    lines = [
        f"experience library {result.path} (schema {result.schema_version}, {result.file_bytes / 1024:.0f} KiB)",
        f"  runs          {result.runs}" + (f"  ({fmt_counts(result.outcomes)})" if result.outcomes else ""),
        f"  candidates    {result.candidates}  ({result.verified} verified)",
        f"  signatures    {result.signatures}" + (f"  ({fmt_counts(result.families)})" if result.families else ""),
        f"  hints         {result.hints}  ({result.seed_hints} seed, {result.hint_uses} uses recorded)",
        f"  best kernels  {result.best_kernels}",
    ]
    if result.repositories:
        lines.append(f"  repositories  {fmt_counts(result.repositories)}")
    print("\n".join(lines), file=sys.stderr)
    return 0


def top(store: ExperienceStore, args: argparse.Namespace) -> int:
    from foundry.experience.summary import library_top

    if args.n < 1:
        raise FatalError("-n must be at least 1")
    result = library_top(store, args.n)
    if args.json:
        print(result.model_dump_json(indent=2))
        return 0
    lines = ["best kernels:"]
    if not result.kernels:
        lines.append("  (none yet)")
    for k in result.kernels:
        speed = f"{k.speedup:.2f}x" if k.speedup else "  n/a"
        lines.append(f"  {speed:>7}  {k.operator:<24} {k.family:<22} {k.gpu} {k.dtype}  from {k.origin_repo}")
    lines.append("most useful hints:")
    for h in result.hints:
        mean = f", mean {h.mean_speedup:.2f}x" if h.mean_speedup else ""
        lines.append(f"  {h.score:5.2f}  {h.id:<28} {h.successes}/{h.tries} helped{mean}  [{h.context or 'any'}]")
    print("\n".join(lines), file=sys.stderr)
    return 0


def export(store: ExperienceStore, args: argparse.Namespace) -> int:
    from foundry.experience.exchange import export_parquet

    report = export_parquet(store, args.file)
    if args.json:
        print(report.model_dump_json(indent=2))
    print(f"exported {sum(report.rows.values())} record(s) to {args.file} ({fmt_counts(report.rows)})",
          file=sys.stderr)  # fmt: skip
    return 0


def import_(store: ExperienceStore, args: argparse.Namespace) -> int:
    from foundry.experience.exchange import import_parquet

    if not args.file.is_file():
        raise FatalError(f"{args.file}: no such export file")
    report = import_parquet(store, args.file)
    if args.json:
        print(report.model_dump_json(indent=2))
    improved = f", {report.improved_best} best kernel(s) improved" if report.improved_best else ""
    print(f"imported {args.file}: {report.total_added} new record(s) ({fmt_counts(report.added)}){improved}",
          file=sys.stderr)  # fmt: skip
    return 0


def fmt_counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in counts.items())
