"""The Ray executor: candidates evaluated by worker actors across a Ray cluster.

One evaluation actor per GPU of the cluster (num_gpus=1), or, on a cluster without GPUs, one CPU actor per
worker running candidates under the Triton interpreter. An actor is threaded: it takes as many candidates
at once as its evaluator's `concurrency` (on a GPU, like the local executor: several candidates compile and
run their correctness trials together while the evaluator's device lock lets only one of them time, alone
on the GPU), so the driver counts slots, not actors. Each actor builds its own evaluator from a picklable
factory (the composition root passes the operator as text, the policy and the evaluator config, never live
modules); candidates and verdicts travel as JSON of the typed records. Results stream back as they finish
(ray.wait) and on_done is called in proposal order, as LocalExecutor does, so a seeded search stays
reproducible. Actors never see the experience library: only the driver (the loop) records.

A lost actor (killed, its node gone, out of memory) or one that stops answering is replaced once; each
candidate it held is retried once on another actor, then recorded as a failed verdict naming the lost worker.
Every ray.get and ray.wait is bounded; a request no node can ever serve fails at once with FatalError.

This is the only module that imports ray, and only when a RayExecutor is built.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from foundry.core.errors import FatalError
from foundry.core.protocols import Evaluator
from foundry.core.records import Candidate, Diagnosis, FailureKind, Stage, Verdict
from foundry.evolve.executor import EVALUATOR_RETRIES, Reverifying, evaluator_failure, timing_available

log = logging.getLogger(__name__)

LOST_WORKER_RETRIES = 1  # a candidate whose worker died is tried once more, on another worker
MAX_CPU_WORKERS = 32  # default cap of CPU actors: each one imports torch and holds an evaluator
MAX_ACTOR_SLOTS = 16  # threads of a GPU actor: the most candidates it can take at once

# A factory called on the worker with its device ("cuda" or "cpu"); it must be picklable by reference
# (a module-level class or function of an installed package) and return a fresh evaluator.
EvaluatorFactory = Callable[[str], Evaluator]


@dataclass(frozen=True)
class RayTimeouts:
    """Bounds on every wait, in seconds."""

    start_s: float = 300.0  # an actor's start: scheduling, importing torch, loading the operator
    candidate_s: float = 1500.0  # one evaluation (the evaluator's child timeout is 600 s on CPU)
    reverify_factor: float = 3.0  # the final check runs more trials and a longer timing run
    poll_s: float = 5.0  # one ray.wait; deadlines are checked between polls
    get_s: float = 120.0  # fetching a result that ray.wait reported ready
    init_s: float = 120.0  # reading the cluster's resources after connecting
    connect_s: float = 10.0  # reaching the head's port (ray.init itself would retry for minutes)


def require_ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise FatalError(
            "--executor ray needs Ray: pip install 'kernel-foundry[cluster]' (or pip install ray) on the "
            "driver and on every node of the cluster, at the cluster's Ray and Python versions"
        ) from exc
    return ray


def restore_threads(threads: str | None) -> None:
    """Give an actor the driver's OMP_NUM_THREADS (None: unset). Ray sets it to the actor's num_cpus, 1,
    in every actor; candidate children inherit it (the isolation allowlist passes it on), so they and the
    actor's own torch would run on one thread where the local executor's use the machine's cores. Called
    before the evaluator is built: torch sizes its thread pool from the variable when first used."""
    if threads is None:
        os.environ.pop("OMP_NUM_THREADS", None)
    else:
        os.environ["OMP_NUM_THREADS"] = threads


class EvaluationWorker:
    """The body of one Ray actor: its own evaluator, candidates in and verdicts out as JSON."""

    def __init__(self, factory: EvaluatorFactory, device: str, threads: str | None = None) -> None:
        restore_threads(threads)
        self.evaluator = factory(device)
        self.device = device

    def info(self) -> dict[str, Any]:
        import ray

        return {
            "pid": os.getpid(),
            "node": ray.get_runtime_context().get_node_id(),
            "device": str(getattr(self.evaluator, "device_name", self.device)),
            "timing": timing_available(self.evaluator),
            "slots": max(int(getattr(self.evaluator, "concurrency", 1)), 1),
        }

    def evaluate(self, candidate_json: str) -> str:
        candidate = Candidate.model_validate_json(candidate_json)
        for attempt in range(EVALUATOR_RETRIES + 1):
            try:
                return self.evaluator.evaluate(candidate).model_dump_json()
            except Exception as exc:  # the evaluator's bug is the bot's failure, not the candidate's
                if attempt < EVALUATOR_RETRIES:
                    log.warning("evaluating %s raised %s: %s; retrying", candidate.id, type(exc).__name__, exc)
                    continue
                log.exception("evaluating %s raised", candidate.id)
                return evaluator_failure(candidate, exc).model_dump_json()
        raise AssertionError("unreachable")

    def reverify(self, candidate_json: str) -> str:
        candidate = Candidate.model_validate_json(candidate_json)
        try:
            if isinstance(self.evaluator, Reverifying):
                return self.evaluator.reverify(candidate).model_dump_json()
            return self.evaluator.evaluate(candidate).model_dump_json()
        except Exception as exc:
            log.exception("re-verifying %s raised", candidate.id)
            return evaluator_failure(candidate, exc).model_dump_json()


@dataclass(eq=False)
class Worker:
    number: int  # 1, 2, … in order of creation, replacements included
    handle: Any
    device: str = ""
    pid: int | None = None
    node: str = ""
    timing: bool = False
    slots: int = 1  # candidates it takes at once

    def describe(self) -> str:
        where = f"pid {self.pid}" if self.pid else "not started"
        if self.node:
            where += f" on node {self.node[:12]}"
        return f"worker {self.number} ({where})"


@dataclass
class Job:
    index: int
    candidate: Candidate
    attempts: int = 0
    worker: Worker | None = None
    deadline: float = 0.0
    lost: tuple[str, ...] = ()  # the workers this candidate outlived


def lost_verdict(candidate: Candidate, lost: Sequence[str], kind: FailureKind, why: str) -> Verdict:
    return Verdict(
        candidate_id=candidate.id,
        verified=False,
        policy="",
        device="",
        diagnoses=(
            Diagnosis(
                stage=Stage.RUN,
                kind=kind,
                message=f"lost {'; '.join(lost)}: {why}; tried {len(lost)} times, not retried again",
                rule="lost_worker",
            ),
        ),
    )


class RayExecutor:
    """Executor over a Ray cluster. `address` None starts a local Ray instance; "auto" joins the local
    cluster; "ray://host:10001" or "host:6379" joins a remote one. When Ray is already initialized in
    this process (tests, notebooks) it is used as it is and left running by close().

    gpus: None uses every GPU of the cluster (CPU actors when it has none); 0 forces CPU actors; N asks
    for N GPU actors and fails at once if the cluster has fewer GPUs.

    slots_per_worker: candidates one actor takes at once; None takes its evaluator's concurrency (on a GPU
    the recipe's, e.g. 4; on CPU 1)."""

    _current: RayExecutor | None = None  # one executor per driver: a new one releases the last one's actors

    def __init__(
        self,
        factory: EvaluatorFactory,
        *,
        address: str | None = None,
        gpus: int | None = None,
        cpu_workers: int | None = None,
        timeouts: RayTimeouts | None = None,
        init_options: dict[str, Any] | None = None,
        slots_per_worker: int | None = None,
    ) -> None:
        if slots_per_worker is not None and not 1 <= slots_per_worker <= MAX_ACTOR_SLOTS:
            raise ValueError(f"slots_per_worker must be 1..{MAX_ACTOR_SLOTS}, got {slots_per_worker}")
        self.ray = require_ray()
        self.factory = factory
        self.slots_per_worker = slots_per_worker
        self.timeouts = timeouts or RayTimeouts()
        self.owns_ray = False
        self.workers_lost: list[str] = []
        if RayExecutor._current is not None:
            RayExecutor._current.close()
        self._connect(address, init_options or {})
        self.device_kind, count = self._plan(gpus, cpu_workers)
        self.pool: list[Worker] = []  # live actors, busy or not
        self.idle: list[Worker] = []  # free slots: an actor appears once per candidate it can still take
        self.numbers = 0
        self._start([self._spawn() for _ in range(count)], minimum=1)
        RayExecutor._current = self

    # -- the Executor protocol ------------------------------------------------------------------

    @property
    def workers(self) -> int:
        """Candidates evaluated at once: the slots of every live actor."""
        return sum(w.slots for w in self.pool)

    @property
    def timing_available(self) -> bool:
        return any(w.timing for w in self.pool)

    @property
    def device_name(self) -> str:
        return self.pool[0].device if self.pool else ""

    def evaluate_all(
        self, candidates: Sequence[Candidate], on_done: Callable[[Candidate, Verdict], None] | None = None
    ) -> list[Verdict]:
        """Evaluate on every idle actor at once; verdicts come back, and on_done is called, in the order
        of `candidates` (each as soon as it and all before it are known)."""
        queue = [Job(i, c) for i, c in enumerate(candidates)]
        verdicts: list[Verdict | None] = [None] * len(candidates)
        running: dict[Any, Job] = {}  # ObjectRef → job
        starting: dict[Any, tuple[Worker, float]] = {}  # ObjectRef of info() → replacement, deadline
        emitted = 0
        try:
            while queue or running:
                while queue and self.idle:
                    job = queue.pop(0)
                    job.worker = self._take()
                    job.attempts += 1
                    job.deadline = time.monotonic() + self.timeouts.candidate_s
                    running[job.worker.handle.evaluate.remote(job.candidate.model_dump_json())] = job
                if not running and not starting:
                    raise FatalError("every Ray worker was lost and none could be replaced; see the log")
                waitables = list(running) + list(starting)
                ready, _ = self.ray.wait(waitables, num_returns=1, timeout=self.timeouts.poll_s)
                for ref in ready:
                    if ref in starting:
                        self._started(ref, *starting.pop(ref))
                        continue
                    job = running.pop(ref)
                    verdict = self._fetch(ref, job.candidate)
                    if verdict is None:
                        starting.update(self._replace(job, queue, verdicts, "it died"))
                    else:
                        self._release(job.worker)
                        verdicts[job.index] = verdict
                now = time.monotonic()
                for ref, job in list(running.items()):
                    if now > job.deadline:
                        running.pop(ref)
                        why = f"no answer within {self.timeouts.candidate_s:.0f} s"
                        starting.update(self._replace(job, queue, verdicts, why, hung=True))
                for ref, (worker, deadline) in list(starting.items()):
                    if now > deadline:
                        starting.pop(ref)
                        log.error(
                            "replacement %s did not start within %.0f s", worker.describe(), self.timeouts.start_s
                        )
                        self._kill(worker)
                while emitted < len(verdicts) and verdicts[emitted] is not None:
                    if on_done:
                        on_done(candidates[emitted], verdicts[emitted])  # type: ignore[arg-type]
                    emitted += 1
        except BaseException:  # on_done raised, or an interrupt: leave the pool usable
            for job in running.values():
                self._release(job.worker)  # its task runs first
            for worker, _ in starting.values():
                self._kill(worker)
            raise
        # replacements still starting join the pool before the next call
        if starting:
            self._start_refs(starting, minimum=0)
        return [v for v in verdicts if v is not None]

    def reverify(self, candidate: Candidate) -> Verdict:
        lost: list[str] = []
        timeout = self.timeouts.candidate_s * self.timeouts.reverify_factor
        for _ in range(LOST_WORKER_RETRIES + 1):
            if not self.idle:
                break
            worker = self._take()
            ref = worker.handle.reverify.remote(candidate.model_dump_json())
            ready, _ = self.ray.wait([ref], num_returns=1, timeout=timeout)
            verdict = self._fetch(ref, candidate) if ready else None
            if verdict is not None:
                self._release(worker)
                return verdict
            lost.append(worker.describe())
            self.workers_lost.append(worker.describe())
            self._kill(worker)
            self._start([self._spawn()], minimum=0)
        why = "the worker died or did not answer during re-verification"
        return lost_verdict(candidate, lost or ["every worker"], FailureKind.CRASH, why)

    def close(self) -> None:
        """Release the actors (and the local Ray instance this executor started). Safe to call twice."""
        for worker in list(self.pool):
            self._kill(worker)
        if RayExecutor._current is self:
            RayExecutor._current = None
        if self.owns_ray and self.ray.is_initialized():
            self.ray.shutdown()
        self.owns_ray = False

    def __enter__(self) -> RayExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the cluster ----------------------------------------------------------------------------

    def _connect(self, address: str | None, options: dict[str, Any]) -> None:
        if self.ray.is_initialized():
            return
        options = {"log_to_driver": False, "include_dashboard": False, **options}
        if address:
            options.pop("include_dashboard")  # a setting of the head node, not of a driver
            why = unreachable(address, self.timeouts.connect_s)
            if why:
                raise FatalError(f"cannot reach the Ray cluster at {address}: {why}; is its head node running?")
        try:
            self.ray.init(address=address, **options)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            where = address or "a new local instance"
            raise FatalError(f"cannot connect to the Ray cluster at {where}: {exc}") from exc
        self.owns_ray = True

    def _resources(self) -> dict[str, float]:
        deadline = time.monotonic() + self.timeouts.init_s
        while True:
            resources = self.ray.cluster_resources()
            if resources.get("CPU") or time.monotonic() > deadline:
                return resources
            time.sleep(1.0)

    def _plan(self, gpus: int | None, cpu_workers: int | None) -> tuple[str, int]:
        """("cuda" or "cpu", actor count), or FatalError when no node could ever host the actors."""
        resources = self._resources()
        have_gpus = int(resources.get("GPU", 0))
        have_cpus = int(resources.get("CPU", 0))
        if gpus is None:
            gpus = have_gpus
        elif gpus > have_gpus:
            raise FatalError(
                f"{gpus} GPU worker(s) asked for, but the Ray cluster has {have_gpus} GPU(s) "
                f"(resources: {', '.join(f'{k}={v:g}' for k, v in sorted(resources.items()) if '.' not in k)}); "
                "start the GPU nodes with `ray start --num-gpus N`, or run without GPUs"
            )
        if gpus > 0:
            log.info("Ray: %d GPU evaluation actor(s)", gpus)
            return "cuda", gpus
        if have_cpus < 1:
            raise FatalError("the Ray cluster has no CPU to run evaluation workers on")
        count = min(cpu_workers or min(have_cpus, MAX_CPU_WORKERS), have_cpus)
        if cpu_workers and cpu_workers > have_cpus:
            log.warning("Ray cluster has %d CPU(s): %d workers instead of %d", have_cpus, count, cpu_workers)
        log.info("Ray: no GPU in the cluster, %d CPU evaluation actor(s) under the Triton interpreter", count)
        return "cpu", count

    def _spawn(self) -> Worker:
        self.numbers += 1
        gpu = self.device_kind == "cuda"
        threads = self.slots_per_worker or (MAX_ACTOR_SLOTS if gpu else 1)
        actor = self.ray.remote(EvaluationWorker).options(
            num_gpus=1 if gpu else 0, num_cpus=1, max_restarts=0, max_task_retries=0, max_concurrency=threads
        )
        return Worker(self.numbers, actor.remote(self.factory, self.device_kind, os.environ.get("OMP_NUM_THREADS")))

    def _start(self, workers: list[Worker], minimum: int) -> None:
        deadline = time.monotonic() + self.timeouts.start_s
        self._start_refs({w.handle.info.remote(): (w, deadline) for w in workers}, minimum)

    def _start_refs(self, pending: dict[Any, tuple[Worker, float]], minimum: int) -> None:
        """Wait (bounded) for actors' info(); those that fail or time out are killed."""
        errors: list[str] = []
        while pending:
            deadline = max(d for _, d in pending.values())
            left = deadline - time.monotonic()
            ready, _ = self.ray.wait(list(pending), num_returns=1, timeout=max(left, 0.0))
            if not ready:
                for worker, _ in pending.values():
                    errors.append(f"{worker.describe()}: not started within {self.timeouts.start_s:.0f} s")
                    self._kill(worker)
                break
            for ref in ready:
                error = self._started(ref, *pending.pop(ref))
                if error:
                    errors.append(error)
        if len(self.pool) < minimum:
            hint = "a GPU worker needs a free GPU" if self.device_kind == "cuda" else "a CPU worker needs a free CPU"
            raise FatalError(
                "no Ray evaluation worker could start (" + "; ".join(errors or ["no reason given"]) + f"); {hint}, "
                "and every node needs kernel-foundry, torch and triton installed"
            )
        devices = {w.device for w in self.pool}
        if len(devices) > 1:
            log.warning("Ray workers on different devices (%s): speedups are each relative to their own GPU", devices)

    def _started(self, ref: Any, worker: Worker, deadline: float) -> str:
        try:
            info = self.ray.get(ref, timeout=self.timeouts.get_s)
        except Exception as exc:  # the actor's constructor raised, or it died while starting
            self._kill(worker)
            log.error("%s failed to start: %s", worker.describe(), exc)
            return f"{worker.describe()}: {first_line(exc)}"
        worker.pid, worker.node = info["pid"], info["node"]
        worker.device, worker.timing = info["device"], info["timing"]
        worker.slots = self.slots_per_worker or min(int(info.get("slots", 1)), MAX_ACTOR_SLOTS)
        log.info("%s ready: %s, %d candidate(s) at once", worker.describe(), worker.device, worker.slots)
        self.pool.append(worker)
        self.idle.extend([worker] * worker.slots)
        return ""

    def _take(self) -> Worker:
        """A free slot on the actor with the most free slots (candidates spread over GPUs first)."""
        worker = max(self.idle, key=lambda w: sum(1 for x in self.idle if x is w))
        self.idle.remove(worker)
        return worker

    def _release(self, worker: Worker | None) -> None:
        """Give a slot back, unless its actor was lost meanwhile (a sibling's candidate hung or killed it)."""
        if worker is not None and worker in self.pool:
            self.idle.append(worker)

    def _fetch(self, ref: Any, candidate: Candidate) -> Verdict | None:
        """The verdict, or None when the worker was lost."""
        errors = self.ray.exceptions
        try:
            return Verdict.model_validate_json(self.ray.get(ref, timeout=self.timeouts.get_s))
        except errors.RayTaskError as exc:  # the method raised; the actor lives on
            log.error("the Ray worker raised on %s: %s", candidate.id, first_line(exc))
            return evaluator_failure(candidate, exc)
        except errors.RayError as exc:  # the actor or its node died, or the result is lost
            log.warning("a Ray worker was lost: %s", first_line(exc))
            return None

    def _replace(
        self, job: Job, queue: list[Job], verdicts: list[Verdict | None], why: str, hung: bool = False
    ) -> dict[Any, tuple[Worker, float]]:
        """Replace job's worker (asynchronously: the new actor's info() ref is returned) and retry the
        candidate once, or record it as failed. The other candidates an actor held when it was lost come
        here too: they are retried or recorded the same way, and the actor is replaced only once."""
        worker = job.worker
        assert worker is not None
        job.lost += (worker.describe(),)
        first = worker in self.pool
        if first:
            self.workers_lost.append(worker.describe())
            self._kill(worker)  # dead already, or hung: either way out of the pool
        if job.attempts <= LOST_WORKER_RETRIES:
            log.warning("%s lost (%s) while evaluating %s: retrying it", worker.describe(), why, job.candidate.id)
            queue.insert(0, job)
        else:
            kind = FailureKind.TIMEOUT if hung else FailureKind.CRASH
            verdicts[job.index] = lost_verdict(job.candidate, job.lost, kind, why)
        if not first:
            return {}
        replacement = self._spawn()
        log.info("starting %s to replace %s", replacement.describe(), worker.describe())
        return {replacement.handle.info.remote(): (replacement, time.monotonic() + self.timeouts.start_s)}

    def _kill(self, worker: Worker) -> None:
        if worker in self.pool:
            self.pool.remove(worker)
        self.idle = [w for w in self.idle if w is not worker]
        try:
            self.ray.kill(worker.handle, no_restart=True)
        except Exception as exc:  # already gone
            log.debug("killing %s: %s", worker.describe(), exc)


def unreachable(address: str, timeout_s: float) -> str:
    """Why host:port (or ray://host:port) accepts no TCP connection within timeout_s; "" when it does,
    or when the address is one Ray resolves itself ("auto")."""
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not port.isdigit():
        return ""
    try:
        socket.create_connection((host, int(port)), timeout=timeout_s).close()
    except OSError as exc:
        return exc.strerror or str(exc) or type(exc).__name__
    return ""


def first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"
