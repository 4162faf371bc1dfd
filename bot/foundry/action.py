"""Composition root for `foundry action triage|optimize|publish|run` inside GitHub Actions.

    triage    (GitHub-hosted runner, issues: write)  gate the event, 👀, status comment, list operators
    optimize  (self-hosted GPU runner, issues: write) gate again, detect, `foundry optimize` per operator
                                                     into the artifacts directory; moves the status comment
                                                     (its only write to GitHub; skipped when refused)
    publish   (GitHub-hosted runner, contents+PRs)   read the artifacts as data, open/update one PR per
                                                     operator, edit the status comment, 🚀 or 😕
    run       all three in one job (one trusted runner that may write)

Reads the standard variables (GITHUB_EVENT_NAME, GITHUB_EVENT_PATH, GITHUB_REPOSITORY, GITHUB_SHA,
GITHUB_WORKSPACE, GITHUB_API_URL, GITHUB_SERVER_URL, GITHUB_RUN_ID, GITHUB_STEP_SUMMARY, GITHUB_OUTPUT)
and GITHUB_TOKEN. Writes the report to $GITHUB_STEP_SUMMARY and pr-number, pr-url, best-speedup to
$GITHUB_OUTPUT.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import os
import re
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from foundry.core.errors import FatalError
from foundry.core.records import RunReport
from foundry.github.api import DEFAULT_API_URL, DEFAULT_BOT_LOGIN, GitHubApi, GitHubApiError, RetryPolicy
from foundry.github.config import CONFIG_PATH, ConfigError, FoundryConfig, parse_config
from foundry.github.detect import DetectedOperator, detect, fingerprint_at, operator_ref, operator_slug
from foundry.github.events import Event, IssueCommentEvent, load_event, valid_operator
from foundry.github.gate import GateResult, Target, gate
from foundry.github.gitrepo import GitError, GitRepo
from foundry.github.progress import DEFAULT_INTERVAL_S, StatusProgress, Tick, watch
from foundry.github.publish import (
    REPORTED,
    Outcome,
    base_key,
    branch_name,
    decide,
    marker_key,
    publish_operator,
    rebuild_conflicted,
)
from foundry.github.recheck import Recheck, recheck
from foundry.github.status import (
    RUNNING,
    final_body,
    reply_marker,
    running_body,
    stages_body,
    status_marker,
    stopped_body,
    summary_markdown,
)
from foundry.report import code_span, escape

log = logging.getLogger(__name__)

PLAN_FILE = "plan.json"
SECRET_NAMES = ("GITHUB_TOKEN", "GH_TOKEN", "ACTIONS_RUNTIME_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_TOKEN")
DEFAULT_OPERATOR_TIMEOUT_S = 50 * 60
UNFINISHED = "not finished: the optimize job stopped before this operator was done (its timeout, or cancelled)"


class ActionError(FatalError):
    pass


# environment ---------------------------------------------------------------------------------------
@dataclass
class ActionEnv:
    event_name: str
    event_path: Path
    repository: str
    sha: str
    workspace: Path
    api_url: str = DEFAULT_API_URL
    server_url: str = "https://github.com"
    run_id: str = ""
    token: str | None = None
    step_summary: Path | None = None
    output: Path | None = None
    extra: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> ActionEnv:
        missing = [
            n
            for n in ("GITHUB_EVENT_NAME", "GITHUB_EVENT_PATH", "GITHUB_REPOSITORY", "GITHUB_SHA")
            if not environ.get(n)
        ]
        if missing:
            raise ActionError(
                f"{', '.join(missing)} not set: `foundry action` runs inside GitHub Actions "
                "(or a test that sets the same variables)"
            )
        return cls(
            event_name=environ["GITHUB_EVENT_NAME"],
            event_path=Path(environ["GITHUB_EVENT_PATH"]),
            repository=environ["GITHUB_REPOSITORY"],
            sha=environ["GITHUB_SHA"],
            workspace=Path(environ.get("GITHUB_WORKSPACE") or os.getcwd()),
            api_url=environ.get("GITHUB_API_URL") or DEFAULT_API_URL,
            server_url=environ.get("GITHUB_SERVER_URL") or "https://github.com",
            run_id=environ.get("GITHUB_RUN_ID", ""),
            token=environ.get("GITHUB_TOKEN") or environ.get("INPUT_GITHUB_TOKEN") or None,
            step_summary=Path(environ["GITHUB_STEP_SUMMARY"]) if environ.get("GITHUB_STEP_SUMMARY") else None,
            output=Path(environ["GITHUB_OUTPUT"]) if environ.get("GITHUB_OUTPUT") else None,
            extra={k: v for k, v in environ.items() if k.startswith("FOUNDRY_")},
        )

    @property
    def dry_run(self) -> bool:
        """FOUNDRY_DRY_RUN=true (the action's `dry-run` input): the summary, no pull requests or refs."""
        return self.extra.get("FOUNDRY_DRY_RUN", "").strip().lower() == "true"

    @property
    def run_url(self) -> str:
        if not self.run_id:
            return ""
        return f"{self.server_url.rstrip('/')}/{self.repository}/actions/runs/{self.run_id}"


def write_outputs(env: ActionEnv, values: Mapping[str, str]) -> None:
    """$GITHUB_OUTPUT, with a random delimiter so that no value can forge another output."""
    if env.output is None:
        return
    with env.output.open("a") as fh:
        for name, value in values.items():
            delimiter = f"ghadelimiter_{uuid.uuid4().hex}"
            fh.write(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")


def write_summary(env: ActionEnv, text: str) -> None:
    if env.step_summary is not None:
        with env.step_summary.open("a") as fh:
            fh.write(text.rstrip() + "\n")


# the plan: what optimize hands to publish -----------------------------------------------------------
class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PlannedOperator(_Record):
    ref: str
    slug: str
    status: str
    budget: int | None = None
    writer: str | None = None
    policy: str | None = None
    precision: str | None = None  # configured settings the optimizer takes (None: the operator file's own)
    training: bool | None = None
    dtype: str | None = None
    inputs: tuple[tuple[int, ...], ...] | None = None
    exit_code: int | None = None
    error: str = ""


class Plan(_Record):
    version: int = 1
    target: Target
    note: str = ""
    operators: tuple[PlannedOperator, ...] = ()
    skipped: tuple[str, ...] = ()


# parts that tests replace -------------------------------------------------------------------------
Checker = Callable[[GitRepo, str, str, str, str], Recheck]  # (git, commit, ref, kernel source, policy)


@dataclass
class Parts:
    api_factory: Callable[[ActionEnv], GitHubApi | None]
    optimizer: Callable[[ActionEnv, PlannedOperator, Path], int]
    remote: str = "origin"
    checker: Checker = field(default=lambda *args: default_checker(*args))


def default_api(env: ActionEnv) -> GitHubApi | None:
    if not env.token:
        return None
    timeout = int(env.extra.get("FOUNDRY_API_TIMEOUT", "15"))
    return GitHubApi(
        env.repository,
        env.token,
        base_url=env.api_url,
        timeout_s=timeout,
        retry=RetryPolicy(),
        bot_login=env.extra.get("FOUNDRY_BOT_LOGIN") or DEFAULT_BOT_LOGIN,
    )


def settings_argv(op: PlannedOperator) -> list[str]:
    """`foundry optimize`'s arguments for the operator's configured settings (commands/operator_args.py); none
    where the operator file's own declarations stand."""
    argv: list[str] = []
    if op.precision:
        argv += ["--precision", op.precision]
    if op.training is not None:
        argv += ["--training" if op.training else "--no-training"]
    if op.inputs:
        argv += ["--inputs", json.dumps([list(s) for s in op.inputs])]
    if op.dtype:
        argv += ["--dtype", op.dtype]
    return argv


def run_optimizer(env: ActionEnv, op: PlannedOperator, out_dir: Path) -> int:
    """`python -m foundry optimize REF --out DIR --json …` in the workspace, in a child process whose
    environment holds no GitHub token. stdout/stderr go to DIR/optimize.log."""
    cmd = [sys.executable, "-m", "foundry", "optimize", op.ref, "--out", str(out_dir), "--json"]
    if op.budget is not None:
        cmd += ["--budget", str(op.budget)]
    if op.writer:
        cmd += ["--writer", op.writer]
    if op.policy:
        cmd += ["--policy", op.policy]
    cmd += settings_argv(op)
    # no GitHub token for the child; and the operator's own imports resolve from the workspace as
    # they would in the user's project (the action runs the bot itself with PYTHONSAFEPATH)
    child_env = {k: v for k, v in os.environ.items() if k not in SECRET_NAMES and k != "PYTHONSAFEPATH"}
    timeout = float(env.extra.get("FOUNDRY_OPERATOR_TIMEOUT", DEFAULT_OPERATOR_TIMEOUT_S))
    out_dir.mkdir(parents=True, exist_ok=True)
    log.info("optimizing %s: %s", op.ref, " ".join(cmd[1:]))
    with (out_dir / "optimize.log").open("w") as logfile:
        try:
            proc = subprocess.run(
                cmd, cwd=env.workspace, env=child_env, stdout=logfile, stderr=subprocess.STDOUT, timeout=timeout
            )
        except subprocess.TimeoutExpired:
            logfile.write(f"\nfoundry action: optimize timed out after {timeout:.0f} s\n")
            return 124
    return proc.returncode


def default_checker(git: GitRepo, commit: str, ref: str, kernel: str, policy: str) -> Recheck:
    """Publish's own check of a kernel (foundry check on the CPU, in a child without the token and without
    the capabilities that read this non-dumpable process's environment)."""
    from foundry.evaluate import sandbox  # ctypes only: no torch for the action

    return recheck(git, commit, ref, kernel, policy=policy, preexec=sandbox.drop_inspection)


DEFAULT_PARTS = Parts(api_factory=default_api, optimizer=run_optimizer)


# steps -----------------------------------------------------------------------------------------------
def _config(git: GitRepo, rev: str) -> FoundryConfig:
    return parse_config(git.show(rev, CONFIG_PATH), source=f"{CONFIG_PATH} at {rev[:12]}")


def _gate(env: ActionEnv, api: GitHubApi | None) -> tuple[Event, GateResult, FoundryConfig]:
    event = load_event(env.event_name, env.event_path)
    if event.repository.full_name != env.repository:
        raise ActionError(f"the event is for {event.repository.full_name} but GITHUB_REPOSITORY is {env.repository}")
    git = GitRepo(env.workspace)
    try:
        config = _config(git, env.sha) if git.commit(env.sha) else FoundryConfig()
    except ConfigError as exc:
        if not isinstance(event, IssueCommentEvent):
            raise
        # a comment still gets its answer: gate with the defaults (permission first), then say what is wrong
        result = gate(event, config=FoundryConfig(), api=api, head_sha=env.sha)
        if not result.run:
            return event, result, FoundryConfig()
        author = event.comment.user.login
        return (
            event,
            result.model_copy(
                update={
                    "run": False,
                    "reason": str(exc),
                    "reply": f"@{author} Kernel Foundry cannot run here: {escape(str(exc))}",
                    "config_error": True,
                }
            ),
            FoundryConfig(),
        )
    return event, gate(event, config=config, api=api, head_sha=env.sha), config


@dataclass
class Selection:
    planned: list[PlannedOperator]
    skipped: list[str]
    note: str
    retired: list[tuple[str, str]]  # (operator, what became of it): deleted or renamed; their open PRs are closed
    unread: list[tuple[str, str]] = field(default_factory=list)  # (file, why it holds no operator the bot reads)


def _operators(env: ActionEnv, target: Target) -> Selection:
    git = GitRepo(env.workspace)
    head = git.commit(target.head)
    if head is None:
        raise ActionError(f"commit {target.head[:12]} is not in the checkout at {env.workspace} (fetch-depth: 0?)")
    config = _config(git, head)
    retired: list[tuple[str, str]] = []
    if target.operator is not None:
        path, _, cls = target.operator.partition("::")
        if git.show(head, path) is None:
            raise ActionError(f"{path} does not exist at {head[:12]}")
        named = config.model_copy(update={"include": (path,), "exclude": ()})  # naming it overrides the globs
        found = detect(env.workspace, base=None, head=head, config=named).operators
        names = {o.class_name for o in found}
        if (cls or "Model") not in names:
            raise ActionError(
                f"{target.operator} is not an operator at {head[:12]} (found: {', '.join(sorted(names)) or 'none'})"
            )
        wanted: list[DetectedOperator] = [o for o in found if o.class_name == (cls or "Model")]
        note, skipped, unread = "", [], []
    else:
        base = target.compare_base
        if base is None and target.kind == "push" and target.base_branch != target.default_branch:
            base = _fork_point(git, head, target.default_branch)
        if base and target.kind == "comment":
            merge_base = git.run("merge-base", base, head).strip() if git.commit(base) else ""
            base = merge_base or base
        detection = detect(env.workspace, base=base, head=head, config=config)
        wanted = list(detection.wanted)
        note = detection.note
        skipped = [f"{s.path}: {s.reason}" for s in detection.skipped]
        unread = [(s.path, s.reason) for s in detection.skipped]
        skipped += [f"{o.ref}: {o.status}" for o in detection.operators if not o.wanted]
        retired = [(o.ref, "was deleted") for o in detection.operators if o.status == "deleted"]
        retired += [
            (
                operator_ref(o.previous_path, o.class_name),
                f"was renamed to {code_span(o.ref)} "
                f"(comment `/foundry optimize {o.ref}` for a kernel under the new name)",
            )
            for o in detection.operators
            if o.previous_path
        ]
    if len(wanted) > config.max_operators:
        skipped += [f"{o.ref}: over max_operators ({config.max_operators})" for o in wanted[config.max_operators :]]
        wanted = wanted[: config.max_operators]
    planned = []
    for o in wanted:
        settings = config.settings_for(o.ref)
        planned.append(
            PlannedOperator(
                ref=o.ref,
                slug=o.slug,
                status=o.status,
                budget=target.budget or settings.budget,
                writer=settings.writer,
                policy=settings.policy,
                precision=settings.precision,
                training=settings.training,
                dtype=settings.dtype,
                inputs=settings.inputs,
            )
        )
    return Selection(planned=planned, skipped=skipped, note=note, retired=retired, unread=unread)


def _fork_point(git: GitRepo, head: str, default_branch: str) -> str | None:
    """Where a newly pushed branch left the default branch (None when that is not in the checkout)."""
    for ref in (f"refs/remotes/origin/{default_branch}", f"refs/heads/{default_branch}"):
        if default_branch and git.commit(ref) and git.ok("merge-base", ref, head):
            return git.run("merge-base", ref, head).strip()
    return None


def _retire(api: GitHubApi, retired: list[tuple[str, str]], head: str, base_branch: str) -> None:
    """Close the open Kernel Foundry PR of each operator the range deleted or renamed, with a comment."""
    for ref, fate in retired:
        pull = api.find_pull(branch_name(ref, base_branch), marker_key(ref, base_branch))
        if pull is None:
            continue
        api.upsert_comment(
            pull.number,
            f"<!-- kernel-foundry:retired {operator_slug(ref)} -->",
            f"{code_span(ref)} {fate} in `{head[:12]}`, so this kernel has nothing left to replace here. Closing.",
        )
        api.close_pull(pull.number)
        log.info("closed #%d: %s %s", pull.number, ref, fate)


def _triage(
    env: ActionEnv, api: GitHubApi | None, *, three_jobs: bool = False
) -> tuple[Target | None, list[PlannedOperator], str]:
    """Gate the event, answer refusals, and for a go: 👀 and the status comment. A user error (an
    operator that does not exist, nothing to optimize) ends here with 😕 and the reason."""
    event, result, _ = _gate(env, api)
    log.info("gate: %s (%s)", "run" if result.run else "skip", result.reason)
    comment_id = getattr(getattr(event, "comment", None), "id", None)
    issue = getattr(getattr(event, "issue", None), "number", None)
    if result.reply and api is not None and comment_id is not None and issue is not None:
        if result.config_error:
            api.react(comment_id, "confused")
        api.upsert_comment(issue, reply_marker(comment_id), result.reply)
    if result.stop and api is not None and comment_id is not None and issue is not None:
        login = event.comment.user.login  # type: ignore[union-attr]
        return None, [], _stop(env, api, issue, comment_id, login)
    target = result.target
    if not result.run or target is None:
        return None, [], result.reason
    commented = target.comment_id is not None and target.issue_number is not None and api is not None
    if commented:
        api.react(target.comment_id, "eyes")
    try:
        target = _resume(env, api, target)
        selection = _operators(env, target)
    except FatalError as exc:
        problem = str(exc)
        planned: list[PlannedOperator] = []
    else:
        planned = selection.planned
        if selection.retired and api is not None and not env.dry_run:
            try:
                _retire(api, selection.retired, target.head, target.base_branch)
            except GitHubApiError as exc:
                log.warning("could not close the PRs of deleted operators: %s", exc)
        note = selection.note
        unread = "; ".join(f"{path}: {why}" for path, why in selection.unread)
        problem = "" if planned else "no new or changed operator" + (f" ({note})" if note else "")
        if unread and problem:
            problem += f"; not read as operators: {unread}"
        elif unread:  # said where people look: the job summary
            listed = "\n".join(f"- {code_span(path)}: {escape(why)}" for path, why in selection.unread)
            write_summary(
                env, f"**Not read as operators** (changed files without an operator the bot reads):\n\n{listed}\n"
            )
    if commented:
        if problem:
            _finish(env, api, target, [], [], problem)
        else:
            refs = [p.ref for p in planned]
            api.upsert_comment(
                target.issue_number,
                status_marker(target.comment_id),
                stages_body(refs, stage="optimize", run_url=env.run_url, run_id=env.run_id)
                if three_jobs
                else running_body(refs, run_url=env.run_url, run_id=env.run_id),
            )
    return (target if planned else None), planned, problem or result.reason


RUN_MARKER = re.compile(r"<!-- kernel-foundry:run id=(\d+) -->")


def _stop(env: ActionEnv, api: GitHubApi, issue: int, comment_id: int, login: str) -> str:
    """`/foundry stop`: cancel the runs whose status comments on this thread say they are still optimizing,
    mark those comments stopped, and answer."""
    stopped: list[str] = []
    for comment in api.bot_comments(issue):
        found = RUN_MARKER.search(comment.body)
        request = re.search(r"<!-- kernel-foundry:status comment=(\d+) -->", comment.body)
        if found is None or request is None or RUNNING not in comment.body or found.group(1) == env.run_id:
            continue
        run_id = found.group(1)
        if api.cancel_run(int(run_id)):
            stopped.append(run_id)
        run_url = f"{env.server_url.rstrip('/')}/{env.repository}/actions/runs/{run_id}"
        api.upsert_comment(issue, status_marker(int(request.group(1))), stopped_body(login, run_url=run_url))
    api.react(comment_id, "+1")
    if stopped:
        reply = f"@{login} stopped: workflow run {', '.join(stopped)} was cancelled."
    else:
        reply = f"@{login} nothing to stop: no Kernel Foundry run of this thread is in progress."
    api.upsert_comment(issue, reply_marker(comment_id), reply)
    return f"/foundry stop: {len(stopped)} run(s) cancelled"


def triage(env: ActionEnv, parts: Parts = DEFAULT_PARTS) -> int:
    target, planned, reason = _triage(env, parts.api_factory(env), three_jobs=True)
    if target is None:
        write_outputs(env, {"run": "false", "reason": reason})
        write_summary(env, f"# Kernel Foundry\n\nNothing to do: {escape(reason)}.")
        return 0
    write_outputs(
        env,
        {
            "run": "true",
            "reason": reason,
            "head": target.head,
            "operators": json.dumps([p.ref for p in planned]),
            # the workflow hands the optimize job the LLM key only when a writer needs it
            "llm": "true" if any(p.writer in ("llm", "all") for p in planned) else "false",
        },
    )
    return 0


def optimize(
    env: ActionEnv,
    artifacts: Path,
    parts: Parts = DEFAULT_PARTS,
    *,
    stages: bool = True,
    summary: bool = True,
    approved: str | None = None,
) -> int:
    """Gate, detect and run the optimizer for each operator; write plan.json and per-operator dirs.
    approved: the commit triage approved (else $FOUNDRY_HEAD); exactly that commit is optimized.
    The status comment of a comment run follows the operators (stages: the three-job form's body) where the
    token may edit comments; nothing else is written to GitHub."""
    from foundry.evaluate import sandbox  # ctypes only: no torch for the action

    if not sandbox.protect_evaluator():  # its environment holds the tokens; operator code runs below it
        log.warning("cannot mark the action non-dumpable: the optimizer may read its environment")
    api = parts.api_factory(env)
    _, result, _ = _gate(env, api)
    artifacts.mkdir(parents=True, exist_ok=True)
    if not result.run or result.target is None:
        write_summary(env, f"# Kernel Foundry\n\nNothing to do: {result.reason}.")
        write_outputs(env, {"run": "false"})
        return 0
    try:
        target = _resume(env, api, _pin(env, result.target, approved))
    except ActionError as exc:
        write_summary(env, f"# Kernel Foundry\n\n**Problem:** {exc}")
        write_outputs(env, {"run": "false"})
        raise
    selection = _operators(env, target)
    planned, skipped, note = selection.planned, selection.skipped, selection.note
    done: list[PlannedOperator] = []
    reports: list[RunReport] = []

    def save(pending: list[PlannedOperator]) -> None:
        """plan.json after every operator (atomically): a job killed by its timeout keeps what finished,
        and the operators it did not finish say so."""
        unfinished = [p.model_copy(update={"error": UNFINISHED}) for p in pending]
        plan = Plan(target=target, note=note, operators=(*done, *unfinished), skipped=tuple(skipped))
        partial = artifacts / (PLAN_FILE + ".partial")
        partial.write_text(plan.model_dump_json(indent=2))
        partial.replace(artifacts / PLAN_FILE)

    save(planned)
    status = _status_progress(env, api, target, [p.ref for p in planned], stages=stages)
    results: dict[str, str] = {}
    interval = float(env.extra.get("FOUNDRY_PROGRESS_INTERVAL") or DEFAULT_INTERVAL_S)
    with _source_tree(env, target.head) as tree:
        for i, op in enumerate(planned):
            out_dir = artifacts / op.slug
            out_dir.mkdir(parents=True, exist_ok=True)
            if status is not None:
                status.update(dict(results), op.ref, "starting")

                def tick(t: Tick, ref: str = op.ref) -> None:
                    status.update(dict(results), ref, t.text())

                watching = watch(out_dir / "optimize.log", interval, tick)
            else:
                watching = contextlib.nullcontext()
            with watching:
                code = parts.optimizer(dataclasses.replace(env, workspace=tree), op, out_dir)
            done.append(_collect(op, code, out_dir, reports))
            results[op.ref] = "failed" if done[-1].error else "done"
            save(planned[i + 1 :])
    if status is not None:
        status.update(dict(results))
    if summary:
        write_summary(env, summary_markdown([], reports, problem="; ".join(o.error for o in done if o.error)))
    write_outputs(env, {"run": "true" if done else "false", "operators": json.dumps([o.ref for o in done])})
    return 0


def _status_progress(
    env: ActionEnv, api: GitHubApi | None, target: Target, refs: list[str], *, stages: bool
) -> StatusProgress | None:
    """The status comment's progress for a comment run (None for other events, or without a token)."""
    if api is None or target.comment_id is None or target.issue_number is None or not refs:
        return None
    return StatusProgress(
        api,
        issue=target.issue_number,
        comment_id=target.comment_id,
        operators=refs,
        run_url=env.run_url,
        run_id=env.run_id,
        stages=stages,
    )


def _pin(env: ActionEnv, target: Target, approved: str | None) -> Target:
    """Time of check = time of use: the target at exactly the commit triage approved (approved, else
    $FOUNDRY_HEAD, which the workflow passes from triage's `head` output). A pull request that moved
    on since keeps its approved commit; one rewritten so that the commit is no longer part of it stops
    the run, as does an approved commit that is not this event's."""
    approved = approved or env.extra.get("FOUNDRY_HEAD", "").strip() or None
    if approved is None or approved == target.head:
        return target
    if not re.fullmatch(r"[0-9a-f]{40}", approved):
        raise ActionError(f"FOUNDRY_HEAD={approved[:60]!r} is not a full commit sha (triage's `head` output)")
    git = GitRepo(env.workspace)
    if git.commit(approved) is None:
        raise ActionError(f"the approved commit {approved[:12]} is not in the checkout (fetch-depth: 0?)")
    current = git.commit(target.head)
    if current is None and re.fullmatch(r"[0-9a-f]{40}", target.head):
        with contextlib.suppress(FatalError):
            git.fetch("origin", target.head)
        current = git.commit(target.head)
    where = f"pull request #{target.issue_number}" if target.issue_number is not None else target.base_branch
    if current is None or not git.ok("merge-base", "--is-ancestor", approved, current):
        raise ActionError(
            f"{where} moved from {approved[:12]} (approved by triage) to {target.head[:12]}, which no longer "
            "contains it; nothing was done. Comment `/foundry optimize` again to optimize the new head"
        )
    log.info("%s moved on to %s since triage; using the approved %s", where, target.head[:12], approved[:12])
    return target.model_copy(update={"head": approved})


def _collect(op: PlannedOperator, code: int, out_dir: Path, reports: list[RunReport]) -> PlannedOperator:
    error = ""
    report = _read_report(out_dir) if code in (0, 1) else None
    if isinstance(report, str):
        error, report = report, None
    elif code not in (0, 1):
        error = f"foundry optimize exited with {code}; see {op.slug}/optimize.log"
    if report is not None:
        reports.append(report)
    return op.model_copy(update={"exit_code": code, "error": error})


@contextlib.contextmanager
def _source_tree(env: ActionEnv, head: str) -> Iterator[Path]:
    """The workspace when it is checked out at head; otherwise a temporary detached worktree at head
    (single-job runs on a pull request comment, where the checkout is the default branch)."""
    git = GitRepo(env.workspace)
    if git.commit("HEAD") == git.commit(head):
        yield env.workspace
        return
    with tempfile.TemporaryDirectory(prefix="foundry-tree-") as tmp:
        tree = Path(tmp) / "tree"
        git.run("worktree", "add", "--quiet", "--detach", str(tree), head)
        try:
            yield tree
        finally:
            git.run("worktree", "remove", "--force", str(tree))


def _read_report(out_dir: Path) -> RunReport | str:
    path = out_dir / "report.json"
    try:
        return RunReport.model_validate_json(path.read_bytes())
    except OSError:
        return f"no report.json in {out_dir.name}"
    except ValidationError as exc:
        return f"{out_dir.name}/report.json is not a RunReport: {exc.errors()[0]['msg']}"


def _load_plan(artifacts: Path) -> Plan:
    try:
        return Plan.model_validate_json((artifacts / PLAN_FILE).read_bytes())
    except OSError as exc:
        raise ActionError(f"no {PLAN_FILE} in {artifacts}: did the optimize job upload its artifacts?") from exc
    except ValidationError as exc:
        raise ActionError(f"{artifacts / PLAN_FILE} is not a plan: {exc.errors()[0]['msg']}") from exc


def publish(env: ActionEnv, artifacts: Path, parts: Parts = DEFAULT_PARTS, *, approved: str | None = None) -> int:
    """Artifacts are data: the plan and reports are validated, refs re-checked against the checkout,
    and the target re-derived from this job's own event, pinned to the commit triage approved."""
    from foundry.evaluate import sandbox  # ctypes only: no torch for the action

    if not sandbox.protect_evaluator():  # the token is in its environment; the re-check runs operator code below
        log.warning("cannot mark the action non-dumpable: the re-check may read its environment")
    api = parts.api_factory(env)
    if api is None:
        raise ActionError("publish needs GITHUB_TOKEN (contents: write, pull-requests: write)")
    _, result, config = _gate(env, api)
    if not result.run or result.target is None:
        write_summary(env, f"# Kernel Foundry\n\nNothing to publish: {result.reason}.")
        write_outputs(env, {"pr-number": "", "pr-url": "", "best-speedup": ""})
        return 0
    target = result.target
    git = GitRepo(env.workspace)
    outcomes: list[Outcome] = []
    reports: list[RunReport] = []
    problem = ""
    try:
        pinned = approved or env.extra.get("FOUNDRY_HEAD")
        target = _resume(env, api, _pin(env, target, approved))
        plan = _load_plan(artifacts)
        if plan.target.model_copy(update={"head": target.head, "compare_base": target.compare_base}) != target:
            raise ActionError("the artifacts were made for another event than this one")
        if plan.target.head != target.head:
            if pinned:
                raise ActionError(
                    f"the artifacts were made for {plan.target.head[:12]}, not for {target.head[:12]} "
                    "that triage approved"
                )
            # no approved commit given (an older workflow): publish what was optimized only when it is
            # what this job checked out (the triage job's output), never a commit the plan names alone
            if git.commit("HEAD") != git.commit(plan.target.head):
                raise ActionError("the artifacts were made for another commit than this checkout")
            target = target.model_copy(update={"head": plan.target.head})
        head = git.commit(target.head)
        if head is None:
            raise ActionError(f"commit {target.head[:12]} is not in the checkout (fetch-depth: 0?)")
        config = _config(git, head)
        # the plan is re-derived from the approved commit: an artifact cannot add an operator
        planned = {p.ref for p in _operators(env, target).planned}
        _publishing(env, api, target, plan)
        for op in plan.operators:
            if valid_operator(op.ref) and op.ref not in planned:  # an invalid ref is reported as such
                outcomes.append(
                    Outcome(
                        ref=op.ref[:200], action="failed", reason="triage did not plan this operator for this event"
                    )
                )
                continue
            outcomes.append(_publish_one(api, git, env, artifacts, op, target, head, config, reports, parts))
        if target.kind in ("push", "schedule"):  # the base moved: the bot's other pull requests into it
            outcomes += _rebuild(env, api, git, target, head, {o.ref for o in outcomes}, parts)
    except (FatalError, OSError) as exc:
        problem = str(exc)
        log.error("publish: %s", problem)
    finished = not problem and all(o.action != "failed" for o in outcomes)
    if finished and target.kind in ("push", "schedule"):
        _mark_done(env, api, target)
    _finish(env, api, target, outcomes, reports, problem)
    return 0 if finished else 1


def _publishing(env: ActionEnv, api: GitHubApi, target: Target, plan: Plan) -> None:
    """The status comment enters the publish stage, with what the optimize job handed over per operator."""
    if target.comment_id is None or target.issue_number is None:
        return
    results = {
        op.ref: ("unfinished" if op.error == UNFINISHED else "failed" if op.error else "done") for op in plan.operators
    }
    try:
        api.upsert_comment(
            target.issue_number,
            status_marker(target.comment_id),
            stages_body(list(results), stage="publish", run_url=env.run_url, run_id=env.run_id, results=results),
        )
    except GitHubApiError as exc:
        log.warning("status comment not updated: %s", exc)


def _rebuild(
    env: ActionEnv, api: GitHubApi, git: GitRepo, target: Target, head: str, published: set[str], parts: Parts
) -> list[Outcome]:
    """Conflicted pull requests of the bot into the moved base, made again on head (publish.rebuild_conflicted);
    a failure here is a warning: the operators this run published stand."""
    try:
        return rebuild_conflicted(
            api=api,
            git=git,
            head=head,
            base_branch=target.base_branch,
            fingerprint=lambda ref: fingerprint_at(git.root, head, ref),
            skip=frozenset(published),
            remote=parts.remote,
            dry_run=env.dry_run,
        )
    except (GitHubApiError, GitError) as exc:
        log.warning("could not rebuild conflicted pull requests: %s", exc)
        return []


def done_ref(base_branch: str) -> str:
    """The ref (under refs/) that records the last commit of base_branch whose push run the bot finished."""
    return f"foundry/done/{base_key(base_branch)}"


def _resume(env: ActionEnv, api: GitHubApi | None, target: Target) -> Target:
    """A push run whose `before` is newer than the last commit the bot finished on its branch (done_ref)
    compares with that commit instead: the operators of a push whose run was cancelled, or failed before it
    finished, are optimized by the next push's run. A rerun of a push keeps its own range; a history rewritten
    so that the finished commit is gone keeps `before` (or detection's fallback)."""
    if target.kind == "schedule" and api is not None:
        return _since_done(env, api, target)
    if target.kind != "push" or api is None or target.compare_base is None:
        return target  # no base: every operator is new already
    finished = _finished_before_head(env, api, target, "comparing with the push's before")
    if finished is None:
        return target
    git = GitRepo(env.workspace)
    before = git.commit(target.compare_base)
    if before is not None and git.ok("merge-base", "--is-ancestor", before, finished):
        return target  # the push's own range starts at (or before) what the bot finished
    log.info("comparing with %s, the last commit the bot finished on %s", finished[:12], target.base_branch)
    return target.model_copy(update={"compare_base": finished})


def _since_done(env: ActionEnv, api: GitHubApi, target: Target) -> Target:
    """A scheduled sweep compares the default branch's head with the last commit the bot finished there:
    whatever push runs missed (dropped, cancelled, filtered by paths:) is planned; with no record, every operator."""
    finished = _finished_before_head(env, api, target, "the sweep plans every operator")
    return target if finished is None else target.model_copy(update={"compare_base": finished})


def _finished_before_head(env: ActionEnv, api: GitHubApi, target: Target, otherwise: str) -> str | None:
    """The last commit the bot finished on the target's branch (done_ref), where it is in this checkout and an
    ancestor of the target's head; None otherwise (a failed read is logged with what happens `otherwise`)."""
    try:
        done = api.ref_sha(done_ref(target.base_branch))
    except GitHubApiError as exc:
        log.warning("cannot read where the bot last finished: %s; %s", exc, otherwise)
        return None
    git = GitRepo(env.workspace)
    finished = git.commit(done) if done else None
    head = git.commit(target.head)
    if finished is None or head is None or not git.ok("merge-base", "--is-ancestor", finished, head):
        return None
    return finished


def _mark_done(env: ActionEnv, api: GitHubApi, target: Target) -> None:
    """Record head as finished for its branch: only forward (a rerun of an older push never moves it back)."""
    if env.dry_run:
        return
    git = GitRepo(env.workspace)
    ref = done_ref(target.base_branch)
    try:
        done = api.ref_sha(ref)
        if done and git.commit(done) and not git.ok("merge-base", "--is-ancestor", done, target.head):
            log.info("%s stays at %s: %s is not after it", ref, done[:12], target.head[:12])
            return
        api.set_ref(ref, target.head)
    except GitHubApiError as exc:
        log.warning(
            "could not record %s as finished (%s): the next push compares from an older commit", target.head[:12], exc
        )


def _publish_one(
    api: GitHubApi,
    git: GitRepo,
    env: ActionEnv,
    artifacts: Path,
    op: PlannedOperator,
    target: Target,
    head: str,
    config: FoundryConfig,
    reports: list[RunReport],
    parts: Parts,
) -> Outcome:
    if not valid_operator(op.ref) or op.slug != operator_slug(op.ref):
        return Outcome(ref=op.ref[:200], action="failed", reason="the plan names an invalid operator")
    if op.error:
        return Outcome(ref=op.ref, action="failed", reason=op.error)
    out_dir = artifacts / op.slug
    report = _read_report(out_dir)
    if isinstance(report, str):
        return Outcome(ref=op.ref, action="failed", reason=report)
    reports.append(report)
    kernel = ""
    if report.verified:
        try:
            kernel = (out_dir / "kernel.py").read_text()
        except (OSError, UnicodeDecodeError) as exc:
            return Outcome(ref=op.ref, action="failed", reason=f"no readable kernel.py in {op.slug}: {exc}")
    checked = ""
    if kernel and decide(report, config)[0]:
        # the artifact's "verified" is a claim: publish runs the kernel itself before any pull request
        policy = config.settings_for(op.ref).policy or "strict"
        check = parts.checker(git, head, op.ref, kernel, policy)
        if not check.verified:
            return Outcome(ref=op.ref, action="failed", reason=f"not published: {check.reason}", verified=False)
        checked = f"{check.reason[0].upper()}{check.reason[1:]}. "
    footer = (
        f"{checked}Timing figures are {REPORTED}. "
        f"Made by [Kernel Foundry]({env.run_url or 'https://github.com'}) for {target.kind} on "
        f"`{target.head[:12]}`. Comment `/foundry optimize {op.ref}` to run it again. "
        "Review the kernel like any code before merging."
    )
    return publish_operator(
        api=api,
        git=git,
        ref=op.ref,
        report=report,
        kernel_source=kernel,
        head=head,
        base_branch=target.base_branch,
        config=config,
        remote=parts.remote,
        footer=footer,
        source=fingerprint_at(git.root, head, op.ref) or "",
        dry_run=env.dry_run,
    )


def _finish(
    env: ActionEnv,
    api: GitHubApi | None,
    target: Target,
    outcomes: list[Outcome],
    reports: list[RunReport],
    problem: str,
) -> None:
    write_summary(env, summary_markdown(outcomes, reports, problem=problem))
    made = [o for o in outcomes if o.action in ("created", "updated") and o.pr_number is not None]
    speedups = [o.speedup for o in outcomes if o.speedup is not None]
    write_outputs(
        env,
        {
            "pr-number": str(made[0].pr_number) if made else "",
            "pr-url": made[0].pr_url if made else "",
            "best-speedup": f"{max(speedups):.3f}" if speedups else "",
            "pull-requests": json.dumps([o.model_dump(mode="json") for o in outcomes]),
        },
    )
    if api is None or target.comment_id is None or target.issue_number is None:
        return
    ok = bool(made) and not problem and all(o.action not in ("failed", "held") for o in outcomes)
    try:
        api.upsert_comment(
            target.issue_number,
            status_marker(target.comment_id),
            final_body(outcomes, run_url=env.run_url, problem=problem),
        )
        api.react(target.comment_id, "rocket" if ok else "confused")
    except GitHubApiError as exc:
        log.error("could not update the status comment: %s", exc)


def run_all(env: ActionEnv, artifacts: Path, parts: Parts = DEFAULT_PARTS) -> int:
    """triage, optimize and publish in one job, with the status comment edited as operators go."""
    api = parts.api_factory(env)
    target, planned, reason = _triage(env, api)
    if target is None:
        write_outputs(env, {"run": "false", "reason": reason, "pr-number": "", "pr-url": "", "best-speedup": ""})
        write_summary(env, f"# Kernel Foundry\n\nNothing to do: {escape(reason)}.")
        return 0

    shared = dataclasses.replace(parts, api_factory=lambda _env: api)  # one client: what it learned stays
    optimize(env, artifacts, shared, stages=False, summary=False, approved=target.head)
    return publish(env, artifacts, shared, approved=target.head)
