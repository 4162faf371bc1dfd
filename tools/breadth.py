"""Breadth coverage (issue 28): run `foundry optimize` on every operator of examples/breadth and report by family.

    python3 tools/breadth.py [--policy strict|hybrid|both] [--budget N] [--jobs J] [--only FAMILY[,FAMILY]]
                             [--ops SUBSTRING] [--timeout S] [--out DIR] [--resume] [--hybrid-all]

Each operator runs through the product's own CLI in a subprocess (`python3 -m foundry optimize FILE --policy P
--budget N --json --out TMP --no-experience`) with a per-operator timeout. Outcomes:

  verified     exit 0 and a verified best kernel
  unsupported  exit 1, no writer could express the operator (the aten ops the product named are kept)
  rejected     exit 1, candidates were written but none verified (the failure classes are kept)
  bad_input    exit 2 (the product's message names the file and the problem)
  error        exit 3, any other code, a Python traceback on stderr, or unreadable JSON: a tool bug
  timeout      the per-operator timeout expired

With `--policy both` the hybrid run is skipped for operators already verified under strict (a strict kernel is
admissible under hybrid, whose guard allows a superset of ops) unless --hybrid-all is given; such rows say
"strict kernel" in the hybrid column.

Writes DIR/results.json (every run, the commands that made them, torch/triton versions) and DIR/README.md (the
coverage table by family and one row per operator); DIR defaults to benchmarks/breadth/<UTC date>/. --resume
keeps the runs already in DIR/results.json whose operator file is unchanged and runs the rest.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SUITE = REPO / "examples" / "breadth"
FAMILY_ORDER = [
    "elementwise",
    "reduction",
    "norm",
    "softmax_loss",
    "matmul",
    "conv",
    "pool",
    "scan",
    "sort",
    "gather_scatter",
    "einsum",
    "attention",
    "block",
]
STATUSES = ("verified", "unsupported", "rejected", "bad_input", "error", "timeout")


def discover(only: list[str], ops: str | None) -> list[Path]:
    files = sorted(p for p in SUITE.glob("*/*.py") if not p.name.startswith("_") and not p.parent.name.startswith("_"))
    if only:
        unknown = set(only) - {p.parent.name for p in files}
        if unknown:
            sys.exit(f"breadth: no family {', '.join(sorted(unknown))} under {SUITE.relative_to(REPO)}")
        files = [p for p in files if p.parent.name in only]
    if ops:
        files = [p for p in files if ops in f"{p.parent.name}/{p.stem}"]
    # round robin over the families, so that a run cut short still covers each of them
    by_family: dict[str, list[Path]] = {}
    for p in files:
        by_family.setdefault(p.parent.name, []).append(p)
    queues = [by_family[f] for f in sorted(by_family, key=_fam_index)]
    return [q[i] for i in range(max(map(len, queues), default=0)) for q in queues if i < len(q)]


def precision_of(path: Path) -> str:
    m = re.search(r'^FOUNDRY_PRECISION\s*=\s*"(\w+)"', path.read_text(), re.M)
    return m.group(1) if m else "fp32"


def file_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def classify(rc: int | None, stdout: str, stderr: str, timed_out: bool) -> dict:
    """One run's outcome from the CLI's exit code, JSON report and stderr."""
    out: dict = {"rc": rc}
    if timed_out:
        out["status"] = "timeout"
        out["detail"] = "per-operator timeout expired"
        return out
    traceback = "Traceback (most recent call last)" in stderr
    report = None
    if stdout.strip():
        try:
            report = json.loads(stdout)
        except json.JSONDecodeError:
            report = None
    tail = "\n".join(stderr.strip().splitlines()[-25:])
    if rc == 2:
        out["status"] = "bad_input"
        out["detail"] = stderr.strip().splitlines()[-1] if stderr.strip() else "exit 2"
        return out
    if rc not in (0, 1) or report is None or traceback:
        out["status"] = "error"
        out["detail"] = (
            f"exit {rc}"
            + ("" if report is not None else ", no JSON report")
            + (", traceback on stderr" if traceback else "")
        )
        out["stderr_tail"] = tail
        return out
    out["evaluated"] = report.get("evaluated")
    out["wall_s"] = report.get("wall_s")
    out["failures"] = report.get("failures") or {}
    notes = report.get("notes") or []
    out["notes"] = [n for n in notes if not n.startswith("timing was not measured")]
    if report.get("verified"):
        verdict = report.get("best_verdict") or {}
        out["status"] = "verified"
        out["library_ops"] = verdict.get("library_ops") or []
        out["kernels"] = [k.get("name") for k in verdict.get("kernels") or []]
        out["detail"] = "library ops kept: " + ", ".join(out["library_ops"]) if out["library_ops"] else ""
        return out
    text = " ".join(out["notes"])
    if "no writer can express" in text or (set(out["failures"]) == {"unsupported"}):
        out["status"] = "unsupported"
        reasons = [
            m.group(1) for n in out["notes"] if (m := re.search(r"no writer can express this operator: (.*)", n))
        ]
        out["detail"] = " ".join(reasons) or text
        out["unsupported_ops"] = sorted(set(re.findall(r"aten\.[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)?", out["detail"])))
        return out
    out["status"] = "rejected"
    out["detail"] = "no candidate verified; failures: " + ", ".join(
        f"{k} {v}" for k, v in sorted(out["failures"].items())
    )
    return out


def run_one(path: Path, policy: str, args: argparse.Namespace) -> dict:
    rel = path.relative_to(REPO)
    with tempfile.TemporaryDirectory(prefix="breadth-") as tmp:
        cmd = [
            sys.executable, "-m", "foundry", "optimize", str(rel),
            "--policy", policy, "--budget", str(args.budget), "--seed", str(args.seed),
            "--workers", str(args.workers), "--json", "--out", tmp, "--no-experience",
        ]  # fmt: skip
        env = dict(os.environ)
        bot = str(args.product_root / "bot")
        env["PYTHONPATH"] = bot + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        env.pop("FOUNDRY_RULES_DIR", None)  # the rules next to the product that runs
        start = time.monotonic()
        timed_out = False
        try:
            proc = subprocess.run(
                cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=args.timeout, start_new_session=True
            )
            rc, stdout, stderr = proc.returncode, proc.stdout, proc.stderr
        except subprocess.TimeoutExpired as exc:
            timed_out = True
            rc = None
            stdout = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
            stderr = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else (exc.stderr or "")
        result = classify(rc, stdout, stderr, timed_out)
        if result["status"] in ("rejected", "verified") and result.get("failures"):
            result["diagnoses"] = first_diagnoses(Path(tmp) / "history.jsonl")
        result["seconds"] = round(time.monotonic() - start, 1)
        result["command"] = shlex.join(["python3", *cmd[1:-4], "--json", "--out", "DIR", "--no-experience"])
    return result


def first_diagnoses(history: Path, limit: int = 3) -> list[str]:
    """The first diagnosis of each failure kind among the candidates (what a rejected run died of)."""
    seen: dict[str, str] = {}
    try:
        lines = history.read_text().splitlines()
    except OSError:
        return []
    for line in lines:
        try:
            verdict = json.loads(line).get("verdict") or {}
        except json.JSONDecodeError:
            continue
        for diag in verdict.get("diagnoses") or []:
            kind = diag.get("kind", "?")
            if kind not in seen and len(seen) < limit:
                seen[kind] = f"{kind}: {str(diag.get('message', ''))[:300]}"
    return list(seen.values())


def snapshot(rev: str) -> tuple[Path, str]:
    """The product (bot/, rules/) as committed at REV, extracted into a temporary folder: other edits of the
    working tree (work in progress, debugging) do not leak into the coverage numbers."""
    sha = subprocess.run(["git", "rev-parse", rev], cwd=REPO, capture_output=True, text=True, check=True).stdout.strip()
    root = Path(tempfile.gettempdir()) / f"breadth-product-{sha[:12]}"
    if not (root / "bot" / "foundry").is_dir():
        root.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(
            ["git", "archive", sha, "bot", "rules", "pyproject.toml"], cwd=REPO, capture_output=True, check=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(root)], input=archive, check=True)
    return root, sha


def versions() -> dict:
    code = "import torch, triton; print(torch.__version__); print(triton.__version__)"
    try:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120).stdout.split()
        return {"torch": out[0], "triton": out[1], "python": sys.version.split()[0]}
    except Exception as exc:  # noqa: BLE001 - reported, not fatal
        return {"error": str(exc)}


def git_head() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip()
    except OSError:
        return ""


def summarize(ops: dict) -> dict:
    """Per family: operators, verified strict / hybrid, unsupported, rejected, errors, timeouts."""
    fams: dict[str, dict] = {}
    for _key, rec in sorted(ops.items()):
        fam = rec["family"]
        row = fams.setdefault(
            fam,
            {"operators": 0, "low_precision": 0, "strict_verified": 0, "hybrid_verified": 0, "unsupported": 0,
             "rejected": 0, "errors": 0, "timeouts": 0, "bad_input": 0, "strict_runs": 0, "hybrid_runs": 0},
        )  # fmt: skip
        row["operators"] += 1
        row["low_precision"] += rec["precision"] in ("fp16", "bf16")
        runs = rec["runs"]
        s, h = runs.get("strict"), runs.get("hybrid")
        row["strict_runs"] += s is not None
        row["hybrid_runs"] += h is not None
        row["strict_verified"] += bool(s and s["status"] == "verified")
        row["hybrid_verified"] += bool((h and h["status"] == "verified") or (s and s["status"] == "verified"))
        final = h if h is not None else s  # the most permissive policy run decides what is left
        if final is None:
            continue
        if final["status"] == "unsupported":
            row["unsupported"] += 1
        elif final["status"] == "rejected":
            row["rejected"] += 1
        elif final["status"] == "bad_input":
            row["bad_input"] += 1
        errs = [r for r in runs.values() if r["status"] == "error"]
        row["errors"] += bool(errs)
        row["timeouts"] += any(r["status"] == "timeout" for r in runs.values())
    order = {f: i for i, f in enumerate(FAMILY_ORDER)}
    return dict(sorted(fams.items(), key=lambda kv: order.get(kv[0], 99)))


def pct(n: int, d: int) -> str:
    return f"{n}/{d} ({100 * n / d:.0f}%)" if d else "-"


def cell(run: dict | None, strict: dict | None = None) -> str:
    if run is None:
        if strict is not None and strict["status"] == "verified":
            return "✓ (strict kernel)"
        return "·"
    st = run["status"]
    if st == "verified":
        return "✓" + (f" lib: {', '.join(run['library_ops'])}" if run.get("library_ops") else "")
    if st == "unsupported":
        return "unsupported: " + (", ".join(run.get("unsupported_ops") or []) or run.get("detail", "")[:80])
    if st == "rejected":
        fails = ", ".join(f"{k} {v}" for k, v in sorted((run.get("failures") or {}).items()))
        return "rejected: " + (fails or "finalists failed re-verification")
    if st == "error":
        last = (run.get("stderr_tail") or "").strip().splitlines()
        return "**ERROR** " + (last[-1][:100] if last else run.get("detail", ""))
    if st == "timeout":
        return f"timeout ({run['seconds']:.0f} s)"
    return f"{st}: {run.get('detail', '')[:100]}"


def markdown(data: dict) -> str:
    fams = data["families"]
    tot = {k: sum(r[k] for r in fams.values()) for k in next(iter(fams.values()), {})}
    lines = [
        f"# Breadth coverage, {data['date']}",
        "",
        "Made by " + " then ".join(f"`{c}`" for c in data.get("commands") or [data["command"]]) + ".",
        "",
        f"Product: {data.get('product', data['git_head'])}; torch {data['versions'].get('torch')}, "
        f"triton {data['versions'].get('triton')}, "
        f"Python {data['versions'].get('python')}; device: {data['device']}; budget {data['budget']}, per-operator "
        f"timeout {data['timeout_s']} s, workers {data['workers']} per run, {data['jobs']} runs at once.",
        "",
        "Hybrid counts an operator verified under strict as verified under hybrid (its kernel passes the hybrid guard);"
        " unsupported / rejected / bad input count the last policy run of each operator; errors and timeouts count"
        " operators with any such run.",
        "",
        "| family | operators | fp16/bf16 | verified strict | verified hybrid | unsupported | rejected | bad input "
        "| errors | timeouts |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for fam, r in list(fams.items()) + ([("**total**", tot)] if tot else []):
        n = r["operators"]
        lines.append(
            f"| {fam} | {n} | {r['low_precision']} | {pct(r['strict_verified'], r['strict_runs'])} | "
            f"{pct(r['hybrid_verified'], n if r['hybrid_runs'] or r['strict_runs'] else 0)} | {r['unsupported']} | "
            f"{r['rejected']} | {r['bad_input']} | {r['errors']} | {r['timeouts']} |"
        )
    lines += ["", "## Operators", "", "| operator | precision | strict | hybrid | seconds |", "|---|---|---|---|---|"]
    for key, rec in data["operators"].items():
        s, h = rec["runs"].get("strict"), rec["runs"].get("hybrid")
        secs = "+".join(f"{r['seconds']:.0f}" for r in rec["runs"].values())
        lines.append(f"| `{key}` | {rec['precision']} | {cell(s)} | {cell(h, s)} | {secs} |")
    unsupported: dict[str, list[str]] = {}
    for key, rec in data["operators"].items():
        for run in rec["runs"].values():
            for op in run.get("unsupported_ops") or []:
                unsupported.setdefault(op, [])
                if key not in unsupported[op]:
                    unsupported[op].append(key)
    if unsupported:
        lines += ["", "## Ops the product named as unsupported", "", "| aten op | operators |", "|---|---|"]
        for op, keys in sorted(unsupported.items(), key=lambda kv: -len(kv[1])):
            lines.append(f"| `{op}` | {len(keys)}: {', '.join(keys)} |")
    rejected = [
        (k, p, r) for k, rec in data["operators"].items() for p, r in rec["runs"].items() if r["status"] == "rejected"
    ]
    if rejected:
        lines += [
            "",
            "## Rejected runs (candidates written, none verified)",
            "",
            "| operator | policy | why |",
            "|---|---|---|",
        ]
        for key, policy, run in rejected:
            why = run.get("diagnoses") or [n for n in run.get("notes") or [] if "failed re-verification" in n][:1]
            text = "; ".join(why) or run.get("detail", "")
            lines.append(f"| `{key}` | {policy} | {text[:400].replace('|', '/')} |")
    errors = [
        (k, p, r) for k, rec in data["operators"].items() for p, r in rec["runs"].items() if r["status"] == "error"
    ]
    if errors:
        lines += ["", "## Errors (tool bugs)", ""]
        for key, policy, run in errors:
            lines += [f"### `{key}` ({policy})", "", "```", run.get("stderr_tail", run.get("detail", "")), "```", ""]
    return "\n".join(lines).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--policy", choices=("strict", "hybrid", "both"), default="both")
    ap.add_argument("--budget", type=int, default=2, help="candidates per operator and policy (default 2)")
    ap.add_argument("--jobs", type=int, default=2, help="operators run at once (default 2)")
    ap.add_argument("--workers", type=int, default=1, help="--workers passed to foundry optimize (default 1)")
    ap.add_argument("--only", default="", help="comma-separated families")
    ap.add_argument("--ops", default=None, help="only operators whose family/name contains this")
    ap.add_argument("--timeout", type=int, default=180, help="seconds per operator and policy (default 180)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=None, help="output folder (default benchmarks/breadth/<UTC date>)")
    ap.add_argument("--resume", action="store_true", help="keep runs already in OUT/results.json")
    ap.add_argument(
        "--rev",
        default=None,
        help="run the product as committed at this git revision (bot/ and rules/ extracted to a temporary folder) "
        "instead of the working tree",
    )
    ap.add_argument(
        "--rerun",
        default="",
        help="with --resume, run again the kept runs of these statuses (comma-separated, e.g. rejected,error,timeout)",
    )
    ap.add_argument("--report-only", action="store_true", help="only render OUT/README.md from OUT/results.json")
    ap.add_argument(
        "--hybrid-all", action="store_true", help="with --policy both, run hybrid also where strict verified"
    )
    args = ap.parse_args(argv)

    if args.rev:
        args.product_root, product = snapshot(args.rev)
    else:
        args.product_root, product = REPO, f"working tree at {git_head()}"
    rerun = {x for x in args.rerun.split(",") if x}
    only = [f for f in args.only.split(",") if f]
    files = discover(only, args.ops)
    if not files:
        sys.exit("breadth: no operators selected")
    date = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d")
    out = Path(args.out) if args.out else REPO / "benchmarks" / "breadth" / date
    out.mkdir(parents=True, exist_ok=True)
    if args.report_only:
        (out / "README.md").write_text(markdown(json.loads((out / "results.json").read_text())))
        print((out / "README.md").read_text())
        return 0
    command = shlex.join(["python3", "tools/breadth.py", *(argv if argv is not None else sys.argv[1:])])

    data: dict = {}
    if args.resume and (out / "results.json").is_file():
        data = json.loads((out / "results.json").read_text())
        for rec in data.get("operators", {}).values():  # re-derive details from the stored notes
            for run in rec["runs"].values():
                if run["status"] == "unsupported" and run.get("notes"):
                    reasons = [
                        m.group(1)
                        for n in run["notes"]
                        if (m := re.search(r"no writer can express this operator: (.*)", n))
                    ]
                    if reasons:
                        run["detail"] = " ".join(reasons)
                        run["unsupported_ops"] = sorted(
                            set(re.findall(r"aten\.[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)?", run["detail"]))
                        )
    data.update(
        command=command, budget=args.budget, timeout_s=args.timeout, workers=args.workers, jobs=args.jobs,
        versions=versions(), git_head=git_head(), product=product,
        device="CPU (Triton interpreter)" if not _cuda() else "CUDA",
    )  # fmt: skip
    data.setdefault("date", date)  # the first run's date (the folder's), kept on --resume
    data["finished"] = None
    data.setdefault("commands", []).append(command)
    ops: dict = data.setdefault("operators", {})
    policies = ["strict", "hybrid"] if args.policy == "both" else [args.policy]
    lock = threading.Lock()

    def save() -> None:
        data["operators"] = dict(sorted(ops.items(), key=lambda kv: (_fam_index(kv[1]["family"]), kv[0])))
        data["families"] = summarize(data["operators"])
        (out / "results.json").write_text(json.dumps(data, indent=1) + "\n")
        (out / "README.md").write_text(markdown(data))

    def work(path: Path) -> str:
        key = f"{path.parent.name}/{path.stem}"
        h = file_hash(path)
        with lock:
            rec = ops.get(key)
            if rec is None or rec.get("hash") != h or not args.resume:
                rec = {"family": path.parent.name, "path": str(path.relative_to(REPO)), "precision": precision_of(path),
                       "hash": h, "runs": {}}  # fmt: skip
                ops[key] = rec
        for policy in policies:
            if policy in rec["runs"] and args.resume and rec["runs"][policy]["status"] not in rerun:
                continue
            strict = rec["runs"].get("strict")
            if (
                policy == "hybrid"
                and args.policy == "both"
                and not args.hybrid_all
                and strict
                and strict["status"] == "verified"
            ):
                with lock:
                    rec["runs"].pop("hybrid", None)  # a stale hybrid run from before strict verified
                continue
            res = run_one(path, policy, args)
            with lock:
                rec["runs"][policy] = res
                save()
        return key + ": " + ", ".join(f"{p} {r['status']}" for p, r in rec["runs"].items())

    started = time.monotonic()
    print(f"breadth: {len(files)} operators, policy {args.policy}, budget {args.budget}, {args.jobs} at once -> {out}",
          file=sys.stderr)  # fmt: skip
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = [pool.submit(work, p) for p in files]
        for i, fut in enumerate(as_completed(futures), 1):
            print(f"[{i}/{len(files)} {time.monotonic() - started:.0f}s] {fut.result()}", file=sys.stderr, flush=True)
    with lock:
        data["finished"] = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")  # noqa: UP017
        save()
    print((out / "README.md").read_text())
    return 0


def _fam_index(fam: str) -> int:
    return FAMILY_ORDER.index(fam) if fam in FAMILY_ORDER else 99


def _cuda() -> bool:
    code = "import torch; print(torch.cuda.is_available())"
    try:
        return (
            subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120).stdout.strip()
            == "True"
        )
    except Exception:  # noqa: BLE001
        return False


if __name__ == "__main__":
    sys.exit(main())
