"""`foundry optimize OPERATOR [--budget N] [--islands K] [--writer template|llm|all] [--policy strict|hybrid]
[--seed S] [--out DIR] [--json]`

Search for a faster verified Triton kernel. --out DIR (default foundry-out/<operator>) receives
kernel.py, report.md, report.json and history.jsonl. Exit 0 when a verified kernel was found,
1 when none was, 2 on bad input."""

from __future__ import annotations

import argparse
import logging
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from foundry.commands.operator_args import add_operator_arguments, load_from_args
from foundry.core.errors import FatalError, Terminated
from foundry.core.protocols import ExperienceSink, Writer
from foundry.core.records import Candidate, OperatorSpec, RunReport, Verdict
from foundry.evolve import (
    Budget,
    Executor,
    ExpertRole,
    LocalExecutor,
    Optimizer,
    SearchConfig,
    SearchResult,
    load_experts,
)
from foundry.evolve.progress import LogProgress, Progress, make_progress
from foundry.rules.loader import RulesError

if TYPE_CHECKING:
    from foundry.experience.signature import OpSignature
    from foundry.spec.loader import LoadedOperator

log = logging.getLogger(__name__)

WRITERS = ("template", "llm", "all")
EXECUTORS = ("local", "ray")
DEFAULT_BUDGET = 32
MAX_CPU_WORKERS = 4
GPU_WORKERS = 4  # evaluate.evaluator.GPU_SEARCH_CONCURRENCY, named here so --help need not import the evaluator
POLICY_HELP = (
    "strict: only allocation, view and layout ops outside Triton; hybrid: also convolution and the ops the "
    "operator lists in FOUNDRY_HYBRID_OPS (rules/runtime.yaml)"
)


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "optimize",
        help="search for a faster verified Triton kernel",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("operator", help="path/to/file.py or path/to/file.py::ClassName")
    add_operator_arguments(parser)
    add_search_arguments(parser)
    parser.add_argument("--out", type=Path, default=None, help="output directory (default foundry-out/<operator>)")
    parser.add_argument("--json", action="store_true", help="print the run report as JSON on stdout")
    parser.set_defaults(handler=run)


def add_search_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--budget", type=int, default=DEFAULT_BUDGET, help="candidates to evaluate")
    parser.add_argument("--islands", type=int, default=4, help="islands, each led by an expert role")
    parser.add_argument("--writer", choices=WRITERS, default="template", help="who writes candidates")
    parser.add_argument("--policy", choices=("strict", "hybrid"), default="strict", help=POLICY_HELP)
    parser.add_argument("--seed", type=int, default=0, help="seed of the search (selection, proposals)")
    parser.add_argument(
        "--time-limit", type=float, default=None, metavar="SECONDS", help="wall-time budget (default: none)"
    )
    parser.add_argument(
        "--max-tokens", type=int, default=None, help="LLM token budget (--writer llm|all; default: none)"
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=None,
        help="candidates evaluated at once: on CPU in all, on a GPU per GPU (timing is always one at a time; "
        f"default: {MAX_CPU_WORKERS} or the CPU count if fewer, {GPU_WORKERS} per GPU)",
    )
    parser.add_argument("--gpus", type=int, default=None, help="GPUs to use (default: every visible one)")
    parser.add_argument("--no-experience", action="store_true", help="neither read nor write the library")
    parser.add_argument(
        "--executor",
        choices=EXECUTORS,
        default=None,
        help="where candidates run: local (default) or ray (a Ray cluster; env FOUNDRY_EXECUTOR)",
    )
    parser.add_argument(
        "--ray-address",
        default=None,
        metavar="ADDR",
        help="Ray cluster to join (ray://host:10001, host:6379, auto); env FOUNDRY_RAY_ADDRESS, which "
        "also selects --executor ray (default: none, a local Ray instance is started)",
    )


@dataclass(frozen=True)
class SearchOptions:
    budget: int = DEFAULT_BUDGET
    islands: int = 4
    writer: str = "template"
    policy: str = "strict"
    seed: int = 0
    time_limit: float | None = None
    max_tokens: int | None = None
    workers: int | None = None
    gpus: int | None = None
    experience: bool = True
    executor: str = "local"
    ray_address: str | None = None

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> SearchOptions:
        options = cls(
            budget=args.budget,
            islands=args.islands,
            writer=args.writer,
            policy=args.policy,
            seed=args.seed,
            time_limit=args.time_limit,
            max_tokens=args.max_tokens,
            workers=args.workers,
            gpus=getattr(args, "gpus", None),
            experience=not args.no_experience,
            **executor_choice(getattr(args, "executor", None), getattr(args, "ray_address", None)),
        )
        options.validate()
        return options

    def validate(self) -> None:
        if self.budget < 1:
            raise FatalError(f"--budget must be at least 1 (got {self.budget})")
        if self.islands < 1:
            raise FatalError(f"--islands must be at least 1 (got {self.islands})")
        if self.time_limit is not None and self.time_limit <= 0:
            raise FatalError("--time-limit must be positive")
        if self.max_tokens is not None and self.max_tokens < 0:
            raise FatalError("--max-tokens must not be negative")
        if self.workers is not None and self.workers < 1:
            raise FatalError("--workers must be at least 1")
        if self.gpus is not None and self.gpus < 1:
            raise FatalError("--gpus must be at least 1")
        if self.executor not in EXECUTORS:
            raise FatalError(f"--executor must be one of {', '.join(EXECUTORS)} (got {self.executor!r})")


def executor_choice(executor: str | None, address: str | None) -> dict[str, str | None]:
    """Flags first, then FOUNDRY_EXECUTOR / FOUNDRY_RAY_ADDRESS (how the GitHub action passes them on);
    an address alone means ray."""
    address = address or os.environ.get("FOUNDRY_RAY_ADDRESS") or None
    executor = executor or os.environ.get("FOUNDRY_EXECUTOR") or ("ray" if address else "local")
    return {"executor": executor, "ray_address": address}


@dataclass(frozen=True)
class Outcome:
    report: RunReport
    result: SearchResult


# -- building the parts ---------------------------------------------------------------------------


def load_roles() -> tuple[ExpertRole, ...]:
    try:
        return load_experts()
    except RulesError as exc:
        raise FatalError(str(exc)) from exc


def build_writers(
    name: str, loaded: LoadedOperator, roles: tuple[ExpertRole, ...], options: SearchOptions
) -> list[Writer]:
    writers: list[Writer] = []
    if name in ("template", "all"):
        from foundry.writers.template import TemplateWriter

        writers.append(TemplateWriter(loader=lambda ref: loaded, policy=options.policy))
    if name in ("llm", "all"):
        from foundry.writers.llm import LLMConfig, LLMWriter
        from foundry.writers.llm_broker import ENV_FD

        if not (os.environ.get("OPENAI_API_KEY") or os.environ.get("OPENAI_BASE_URL") or os.environ.get(ENV_FD)):
            raise FatalError(
                "--writer llm needs an endpoint: set OPENAI_API_KEY (and OPENAI_BASE_URL for a compatible "
                "server other than OpenAI's)"
            )
        overrides: dict[str, object] = {
            "models": {r.name: r.model for r in roles if r.model},
            "temperatures": {r.name: r.temperature for r in roles if r.temperature is not None},
        }
        if options.max_tokens is not None:
            overrides["max_tokens"] = options.max_tokens
        writers.append(LLMWriter(LLMConfig.from_env(**overrides), roles={r.name: r.prompt for r in roles}))
    return writers


def build_executor(loaded: LoadedOperator, options: SearchOptions) -> tuple[Executor, str]:
    from foundry.evaluate.evaluator import GPU_SEARCH_CONCURRENCY, CandidateEvaluator, EvaluatorConfig

    if options.executor == "ray":
        from foundry.evolve.ray_executor import RayExecutor

        # Each actor builds its own evaluator from the operator's text; it compiles statically when
        # it has no GPU (the cost model), as the local evaluator does.
        # On GPU nodes each actor takes --workers candidates at once, as the local executor does per GPU.
        concurrency = options.workers or GPU_SEARCH_CONCURRENCY
        recipe = EvaluatorRecipe(loaded.spec, loaded.source, str(loaded.path.resolve()), options.policy, concurrency)
        ray_executor = RayExecutor(recipe, address=options.ray_address, cpu_workers=options.workers)
        return ray_executor, ray_executor.device_name
    # The next worker starts while the current candidate runs; without a GPU, verified kernels are also
    # compiled for sm_90 so the static cost model ranks them on registers, spills and shared memory.
    # The evaluator's reverify() is the final check (more trials, a longer timing run, same reference).
    gpus = visible_gpus()
    if gpus:
        if options.gpus is not None and options.gpus > gpus:
            raise FatalError(f"--gpus {options.gpus}: only {gpus} GPU(s) visible")
        # One evaluator per GPU; --workers candidates in flight on each, timed one at a time.
        per_gpu = EvaluatorConfig(warm_pool=True, gpu_concurrency=options.workers or GPU_SEARCH_CONCURRENCY)
        evaluators = [
            CandidateEvaluator(loaded, policy=options.policy, config=per_gpu, device=f"cuda:{i}")
            for i in range(options.gpus or gpus)
        ]
        return LocalExecutor(evaluators), evaluators[0].device_name  # the GPU model names library records
    config = EvaluatorConfig(warm_pool=True, static_compile=static_compile_available())
    evaluator = CandidateEvaluator(loaded, policy=options.policy, config=config, device="cpu")
    workers = options.workers or max(1, min(MAX_CPU_WORKERS, os.cpu_count() or 1))
    executor = LocalExecutor([evaluator], slots_per_evaluator=workers)
    return executor, evaluator.device_name


@dataclass(frozen=True)
class EvaluatorRecipe:
    """What a Ray worker needs to build its own evaluator: the operator as text (the driver's file is
    used when the worker sees the same one), the policy. Called on the worker with its device."""

    spec: OperatorSpec
    source: str
    path: str  # the driver's absolute path
    policy: str
    gpu_concurrency: int = 1  # candidates a GPU actor's evaluator takes at once (timed one at a time)

    def __call__(self, device: str):
        import hashlib
        import tempfile

        from foundry.evaluate.evaluator import CandidateEvaluator, EvaluatorConfig
        from foundry.spec.loader import load_operator

        path = Path(self.path)
        same = path.is_file() and hashlib.sha256(path.read_text().encode()).hexdigest()[:16] == self.spec.source_hash
        if not same:
            path = Path(tempfile.mkdtemp(prefix="foundry-operator-")) / path.name
            path.write_text(self.source)
        loaded = load_operator(
            f"{path}::{self.spec.class_name}",
            precision=self.spec.precision,
            input_shapes=self.spec.input_shapes,
            input_dtype=self.spec.input_dtype,
        )
        loaded.spec = self.spec  # the driver's spec: same name, hybrid ops and hash in every verdict
        # A GPU actor takes gpu_concurrency candidates at once (its warm pool holds as many workers); on CPU
        # the evaluator takes one at a time.
        config = EvaluatorConfig(warm_pool=True, static_compile=device == "cpu", gpu_concurrency=self.gpu_concurrency)
        return CandidateEvaluator(loaded, policy=self.policy, config=config, device=device)


def static_compile_available() -> bool:
    """Whether this Triton can compile for sm_90 without a GPU (evaluate.static_compile): its NVIDIA backend
    is installed. Without a GPU, `optimize` and `check` then compile every verified kernel for sm_90."""
    try:
        from triton.backends import backends
    except ImportError:
        return False
    return "nvidia" in backends


def visible_gpus() -> int:
    import torch

    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def open_experience(loaded: LoadedOperator, options: SearchOptions, device: str, signature: OpSignature):
    """The run's session in the experience library (None with --no-experience)."""
    if not options.experience:
        return None
    import torch
    import triton

    from foundry.experience import ExperienceStore

    try:
        store = ExperienceStore()
        return store.start_run(
            loaded.spec,
            signature,
            repo=os.environ.get("GITHUB_REPOSITORY", "local"),
            commit=os.environ.get("GITHUB_SHA", ""),
            gpu=device,
            budget=options.budget,
            torch_version=torch.__version__,
            triton_version=triton.__version__,
        )
    except FatalError as exc:
        # A corrupt or newer library is reported and left untouched; the search goes on without it.
        log.error("experience library unusable, searching without it: %s", exc)
        return None


class LibrarySink:
    """The run's experience session as the optimizer sees it: ExperienceSink, plus hints for a
    lineage's latest diagnosis (evolve.loop.LineageHints)."""

    def __init__(self, session) -> None:
        self.session = session

    def retrieve(self, spec, k):
        return self.session.retrieve(spec, k)

    def record(self, spec, candidate, verdict) -> None:
        self.session.record(spec, candidate, verdict)

    def hints_for_verdict(self, verdict: Verdict, k: int, expert: str):
        from foundry.experience import facts_from_verdict

        return self.session.hints_for(facts_from_verdict(verdict), k, expert=expert)


def outcome_of(result: SearchResult) -> str:
    if not result.verified:
        return "failed"
    timing = result.best_verdict.timing if result.best_verdict else None
    if timing is None or not timing.measured or timing.speedup_eager is None:
        return "verified"
    return "improved" if timing.speedup_eager > 1.0 else "no_gain"


def close_executor(executor: Executor) -> None:
    close = getattr(executor, "close", None)
    if callable(close):
        close()


# -- the search -----------------------------------------------------------------------------------


def optimize_operator(loaded: LoadedOperator, options: SearchOptions, progress: Progress | None = None) -> Outcome:
    import torch
    import triton

    from foundry.spec.signature import signature_of

    roles = load_roles()
    writers = build_writers(options.writer, loaded, roles, options)
    # The reference runs once before any candidate: an operator that does not run is the user's input to fix
    # (SpecError, exit 2), not a failure of every candidate. Its signature is the library's key.
    small = not visible_gpus()
    signature = signature_of(loaded, small=small)
    executor, device = build_executor(loaded, options)
    started = datetime.now(UTC).isoformat(timespec="seconds")
    try:
        if options.experience and small == executor.timing_available:  # Ray GPUs seen from a CPU driver
            signature = signature_of(loaded, small=not small)
        session = open_experience(loaded, options, device, signature)
    except BaseException:
        close_executor(executor)
        raise
    config = SearchConfig(
        islands=options.islands,
        budget=Budget(candidates=options.budget, wall_s=options.time_limit, tokens=options.max_tokens),
        seed=options.seed,
    )
    sink: ExperienceSink | None = LibrarySink(session) if session is not None else None
    try:
        result = Optimizer(
            loaded.spec, loaded.source, writers, executor, roles, config, sink=sink, progress=progress
        ).run()
    except BaseException:
        if session is not None:
            session.__exit__(*sys.exc_info())
        raise
    finally:
        close_executor(executor)
    experience = result.experience
    if session is not None:
        best = result.best.candidate if result.best else None
        experience = session.finish(outcome_of(result), best=best, best_verdict=result.best_verdict)
    report = RunReport(
        operator=loaded.spec,
        verified=result.verified,
        policy=options.policy,
        writer=options.writer,
        device=device,
        torch_version=torch.__version__,
        triton_version=triton.__version__,
        timing_measured=result.timing_measured,
        best=result.best.candidate if result.best else None,
        best_verdict=result.best_verdict,
        budget=options.budget,
        evaluated=result.evaluated,
        wall_s=round(result.wall_s, 3),
        islands=result.islands,
        history=result.history,
        failures=result.failures,
        experience=experience,
        notes=result.notes + result.migrations,
        started_at=started,
    )
    return Outcome(report, result)


# -- output ---------------------------------------------------------------------------------------


def kernel_header(report: RunReport, candidate: Candidate, verdict: Verdict) -> str:
    from foundry.report import named_checks

    spec = report.operator
    timing = verdict.timing
    lines = [
        "Kernel Foundry: a verified Triton kernel, generated by `foundry optimize`.",
        f"operator: {spec.ref} ({spec.name}), dtype {spec.dtype}, precision {spec.precision}",
        f"GPU: {timing.device if timing and timing.device else report.device}",
    ]
    if timing is not None and timing.measured and timing.candidate_ms and timing.eager_ms:
        speed = (
            f"speed: {timing.candidate_ms:.4f} ms; {timing.speedup_eager:.2f}x over eager ({timing.eager_ms:.4f} ms)"
        )
        if timing.compile_ms and timing.speedup_compile:
            speed += f", {timing.speedup_compile:.2f}x over torch.compile ({timing.compile_ms:.4f} ms)"
        runs = f", the median of {len(timing.runs)} runs" if len(timing.runs) > 1 else ""
        lines.append(speed + f"; median of {timing.trials} trials{runs}")
        if timing.roofline is not None:
            r = timing.roofline
            lines.append(f"roofline: {r.pct_of_floor:.0f}% of the floor, {r.bound}-bound")
    else:
        reason = timing.reason if timing and timing.reason else "no GPU"
        lines.append("speed: " + (reason if reason.startswith("not measured") else f"not measured ({reason})"))
    lines.append(
        f"verification: policy {verdict.policy}, {verdict.trials} correctness trials with fresh seeds, "
        f"re-verified after the search; checks: {', '.join(named_checks(verdict)) or 'none listed'}"
    )
    # the genes are not repeated here: a template kernel's module docstring names those that shaped it, once
    lines.append(
        f"candidate: {candidate.id} (writer {candidate.writer}, expert {candidate.expert}, "
        f"generation {candidate.generation})"
    )
    lines.append(f"torch {report.torch_version}, triton {report.triton_version}, {report.started_at}")
    return "".join(f"# {line}\n" for line in lines)


def write_outputs(out: Path, outcome: Outcome) -> list[Path]:
    from foundry.report import render_report_markdown

    report, result = outcome.report, outcome.result
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise FatalError(f"{out}: cannot create the output directory: {exc.strerror or exc}") from exc
    written = []
    kernel = out / "kernel.py"
    if report.best is not None and report.best_verdict is not None:
        kernel.write_text(kernel_header(report, report.best, report.best_verdict) + "\n" + report.best.source)
        written.append(kernel)
    elif kernel.exists():
        kernel.unlink()  # a kernel from an earlier run must not pass for this run's result
    (out / "report.json").write_text(report.model_dump_json(indent=2) + "\n")
    (out / "report.md").write_text(render_report_markdown(report))
    with (out / "history.jsonl").open("w") as fh:
        for entry in result.entries:
            fh.write(entry.model_dump_json() + "\n")
    written += [out / "report.md", out / "report.json", out / "history.jsonl"]
    return written


def summary_lines(report: RunReport) -> list[str]:
    lines = [
        f"{report.operator.ref}: {report.evaluated} candidates evaluated in {report.wall_s:.0f} s on {report.device}"
    ]
    if report.best is None or report.best_verdict is None:
        lines.append("no verified kernel")
        return lines
    timing = report.best_verdict.timing
    lines.append(f"best: {report.best.id} (expert {report.best.expert}, writer {report.best.writer}), re-verified")
    if timing is not None and timing.measured and timing.speedup_eager:
        speed = f"speedup {timing.speedup_eager:.2f}x over eager"
        if timing.speedup_compile:
            speed += f", {timing.speedup_compile:.2f}x over torch.compile"
        lines.append(speed)
    else:
        lines.append("timing was not measured (no GPU): the kernel is verified, its speed is unknown")
    return lines


# -- secrets stay out of the process that imports operator code --------------------------------------

KEY_HOLDER_ONLY = ("OPENAI_API_KEY",)  # besides the secret-looking names, what the optimizer never sees


def secret_names(environ: Mapping[str, str]) -> list[str]:
    from foundry.evaluate.isolation import SECRET

    return sorted(k for k in environ if SECRET.search(k) or k in KEY_HOLDER_ONLY)


def child_setup(parent: int) -> None:
    """Between fork and exec of the optimizer: none of the capabilities that read other processes (even as
    root it cannot read the non-dumpable key holder's environment or memory; the rest stay for bwrap), and no
    life after the key holder's."""
    from foundry.evaluate import sandbox

    sandbox.die_with_parent(parent)
    sandbox.drop_inspection()


def run_without_secrets(argv: Sequence[str], environ: Mapping[str, str]) -> int:
    """Be the key holder: run `foundry ARGV` as a child whose initial environment holds no secret-looking
    variable and no LLM key, answer its LLM requests over a socket pair (writers/llm_broker.py) with the key
    this process keeps, and return the child's exit status. This process imports no operator code."""
    from foundry.evaluate import sandbox
    from foundry.writers import llm, llm_broker

    if not sandbox.protect_evaluator():
        log.warning("cannot mark the key holder non-dumpable: the optimizer may read its environment")
    log.info("operator code runs in a child without %s", ", ".join(secret_names(environ)))
    if environ.get("RAY_AUTH_TOKEN"):
        log.warning(
            "RAY_AUTH_TOKEN stays here: the optimizer, Ray's driver, imports operator code, so a Ray cluster "
            "with token authentication will refuse it"
        )
    ours, theirs = socket.socketpair()
    fd = theirs.fileno()
    env = {k: v for k, v in environ.items() if k not in secret_names(environ)}
    env[llm_broker.ENV_FD] = str(fd)
    parent = os.getpid()
    proc = subprocess.Popen(  # noqa: PLW1509 - runs before exec: prctl calls only
        [sys.executable, "-m", "foundry", *argv], env=env, pass_fds=(fd,), preexec_fn=lambda: child_setup(parent)
    )
    theirs.close()
    answer = llm.answerer(environ.get("OPENAI_BASE_URL") or None, environ.get("OPENAI_API_KEY") or None)
    threading.Thread(target=llm_broker.serve, args=(ours, answer), name="llm-broker", daemon=True).start()
    try:
        return proc.wait()
    except (Terminated, KeyboardInterrupt):
        proc.terminate()
        proc.wait()
        raise
    finally:
        ours.close()


def run(args: argparse.Namespace) -> int:
    argv = getattr(args, "argv", None)
    if argv is not None and secret_names(os.environ):
        return run_without_secrets(argv, dict(os.environ))
    options = SearchOptions.from_args(args)
    loaded = load_from_args(args)
    out = args.out or Path("foundry-out") / loaded.spec.name
    progress = LogProgress() if args.verbose else make_progress(sys.stderr)
    outcome = optimize_operator(loaded, options, progress)
    written = write_outputs(out, outcome)
    for line in summary_lines(outcome.report):
        print(line, file=sys.stderr)
    print("wrote " + ", ".join(str(p) for p in written), file=sys.stderr)
    if args.json:
        print(outcome.report.model_dump_json(indent=2))
    return 0 if outcome.report.verified else 1
