"""Merge `foundry bench --out` reports of one setup (a bench split over several GPU calls) into one:

    python tools/merge_bench.py ALL.json part1.json part2.json ... [--md TABLE.md]

Rows keep their order; the aggregate (geometric means, shares) is recomputed over all of them. Reports
from another device, torch/triton version, policy, writer or budget are refused."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from foundry.commands.bench import BenchReport, merge_reports, render_table, write_report
from foundry.core.errors import FatalError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("parts", type=Path, nargs="+")
    parser.add_argument("--md", type=Path, default=None, help="also write the table as Markdown")
    args = parser.parse_args(argv)
    try:
        merged = merge_reports([BenchReport.model_validate_json(p.read_text()) for p in args.parts])
    except (OSError, ValueError, FatalError) as exc:
        print(f"merge_bench: {exc}", file=sys.stderr)
        return 2
    write_report(merged, args.out)
    table = render_table(merged)
    if args.md:
        args.md.write_text(table + "\n")
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
