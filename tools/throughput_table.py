"""Throughput of a search from its debug log (`foundry -v optimize ... 2> LOG`): candidates per minute between
generations (the first generation, which also compiles the reference with torch.compile, left out) and the
median of each evaluation stage the evaluator logged (its own, then its worker's, marked "child").

    python tools/throughput_table.py LOG... [--md TABLE.md]
"""

from __future__ import annotations

import argparse
import re
import statistics
from pathlib import Path

GENERATION = re.compile(r"generation (\d+): (\d+)/\d+ candidates evaluated, (\d+) s")
STAGES = re.compile(r"foundry\.evaluate\.evaluator: (\S+): (.*?)(?: \(child: (.*)\))?$")
SPAN = re.compile(r"(.+?) (-?[0-9.]+)s$")


def spans(text: str) -> list[tuple[str, float]]:
    found = []
    for part in text.split(", "):
        match = SPAN.match(part.strip())
        if match:
            found.append((match.group(1), float(match.group(2))))
    return found


def summarize(path: Path) -> dict[str, object]:
    generations: list[tuple[int, int, int]] = []
    stages: dict[str, list[float]] = {}
    for line in path.read_text().splitlines():
        if match := GENERATION.search(line):
            generations.append((int(match.group(1)), int(match.group(2)), int(match.group(3))))
        elif (match := STAGES.search(line)) and "shared" in match.group(2):
            for name, value in spans(match.group(2)):
                stages.setdefault(name, []).append(value)
            for name, value in spans(match.group(3) or ""):
                stages.setdefault(f"child: {name}", []).append(value)
    rate = None
    if len(generations) >= 2:
        (_, first_done, first_s), (_, last_done, last_s) = generations[0], generations[-1]
        if last_s > first_s:
            rate = (last_done - first_done) / (last_s - first_s) * 60
    return {
        "log": path.name,
        "generations": generations,
        "per_minute": rate,
        "medians": {name: statistics.median(values) for name, values in stages.items()},
    }


def table(rows: list[dict[str, object]]) -> str:
    names: list[str] = []
    for row in rows:
        names.extend(n for n in row["medians"] if n not in names)  # type: ignore[union-attr]
    out = ["stage (median s) | " + " | ".join(str(r["log"]) for r in rows), "--- | " + " | ".join("---" for _ in rows)]
    for name in names:
        cells = [f"{r['medians'][name]:.2f}" if name in r["medians"] else "" for r in rows]  # type: ignore[index,operator]
        out.append(f"{name} | " + " | ".join(cells))
    rates = [f"{r['per_minute']:.1f}" if r["per_minute"] else "n/a" for r in rows]
    out.append("**candidates per minute after generation 0** | " + " | ".join(rates))
    return "\n".join(out) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("logs", nargs="+", type=Path)
    parser.add_argument("--md", type=Path, default=None, help="write the table here too")
    args = parser.parse_args()
    text = table([summarize(p) for p in args.logs])
    print(text)
    if args.md:
        args.md.write_text(text)


if __name__ == "__main__":
    main()
