"""The Ray executor on a real local Ray cluster (2 CPUs), evaluating real candidates under the Triton
interpreter: the same verdicts as the local executor, workers killed mid-run, every wait bounded."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")

from foundry.commands.optimize import EvaluatorRecipe  # noqa: E402
from foundry.core.errors import FatalError  # noqa: E402
from foundry.core.records import Candidate, FailureKind, Stage  # noqa: E402
from foundry.evolve.executor import LocalExecutor  # noqa: E402
from foundry.evolve.ray_executor import RayExecutor, RayTimeouts  # noqa: E402
from foundry.spec.loader import load_operator  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.interp]

ROOT = Path(__file__).resolve().parents[2]
OPERATOR = ROOT / "tests" / "cheats" / "operators" / "softmax_rows.py"
HONEST = ROOT / "tests" / "cheats" / "honest" / "softmax.py"
CHEATS = ROOT / "tests" / "cheats" / "candidates"
# bounds for the tests: generous for a loaded 2-core machine, short enough that a hang fails the test
TIMEOUTS = RayTimeouts(start_s=180, candidate_s=300, poll_s=0.5, get_s=30)
KILL_WAIT_S = 120


@pytest.fixture(scope="module")
def cluster():
    """A local Ray instance with 2 CPUs. Its processes inherit HOME and an experience-library path
    that no actor may touch (only the driver records)."""
    temp = tempfile.mkdtemp(prefix="kfray", dir="/tmp")  # short: Ray's socket paths have a length limit
    library = Path(temp) / "actors-must-not-touch.duckdb"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOME", temp)
        mp.setenv("FOUNDRY_EXPERIENCE_DB", str(library))
        ray.init(num_cpus=2, include_dashboard=False, _temp_dir=temp, log_to_driver=False)
        try:
            yield library
        finally:
            ray.shutdown()
    shutil.rmtree(temp, ignore_errors=True)


@pytest.fixture(scope="module")
def recipe() -> EvaluatorRecipe:
    loaded = load_operator(str(OPERATOR))
    return EvaluatorRecipe(loaded.spec, loaded.source, str(OPERATOR), "strict")


@pytest.fixture
def executor(cluster, recipe):
    """Two CPU actors, shared by the tests of this module while they live."""
    current = RayExecutor._current
    if current is None or current.workers < 2:
        current = RayExecutor(recipe, cpu_workers=2, timeouts=TIMEOUTS)
    assert current.workers == 2
    return current


def candidate(path: Path, ident: str) -> Candidate:
    return Candidate(id=ident, source=path.read_text())


def outcome(verdict) -> tuple[bool, FailureKind | None]:
    return verdict.verified, verdict.failure.kind if verdict.failure else None


class Killer(threading.Thread):
    """SIGKILLs the process of each worker that takes a candidate, `times` times, one second after it
    is seen busy (an evaluation takes several seconds: a child process, torch, the interpreter)."""

    def __init__(self, executor: RayExecutor, times: int) -> None:
        super().__init__(daemon=True)
        self.executor, self.times = executor, times
        self.killed: list[int] = []
        self.stop = threading.Event()

    def run(self) -> None:
        deadline = time.monotonic() + KILL_WAIT_S
        while len(self.killed) < self.times and time.monotonic() < deadline and not self.stop.is_set():
            busy = [w for w in list(self.executor.pool) if w not in self.executor.idle and w.pid not in self.killed]
            if busy:
                time.sleep(1.0)
                os.kill(busy[0].pid, signal.SIGKILL)
                self.killed.append(busy[0].pid)
            time.sleep(0.1)


def test_ray_verdicts_match_the_local_executor(executor, recipe, cluster):
    candidates = [
        candidate(HONEST, "honest-softmax"),
        candidate(CHEATS / "torch_fallback.py", "torch-fallback"),
        candidate(CHEATS / "try_except_fallback.py", "try-except"),
    ]
    order: list[str] = []
    remote = executor.evaluate_all(candidates, on_done=lambda c, v: order.append(f"{c.id}={v.candidate_id}"))
    local_evaluator = recipe("cpu")
    try:
        local = LocalExecutor([local_evaluator], slots_per_evaluator=2).evaluate_all(candidates)
    finally:
        local_evaluator.close()

    assert [v.candidate_id for v in remote] == [c.id for c in candidates]
    assert order == [f"{c.id}={c.id}" for c in candidates], "on_done in proposal order, each with its verdict"
    assert [outcome(v) for v in remote] == [outcome(v) for v in local]
    assert [outcome(v) for v in remote] == [
        (True, None),
        (False, FailureKind.RUNTIME_GUARD),
        (False, FailureKind.STATIC_GUARD),
    ]
    assert remote[0].device == "cpu (Triton interpreter)" and remote[0].trials == local[0].trials
    assert not executor.timing_available
    assert not cluster.exists(), "an actor touched the experience library"


def test_ray_worker_killed_mid_run_is_replaced_and_its_candidate_retried(executor):
    candidates = [candidate(HONEST, f"honest-{i}") for i in range(2)]
    killer = Killer(executor, times=1)
    killer.start()
    try:
        verdicts = executor.evaluate_all(candidates)
    finally:
        killer.stop.set()
        killer.join(timeout=10)
    assert len(killer.killed) == 1
    assert [v.candidate_id for v in verdicts] == [c.id for c in candidates], "nothing lost"
    assert all(v.verified for v in verdicts), [v.failure.headline() for v in verdicts if v.failure]
    assert len(executor.workers_lost) == 1 and f"pid {killer.killed[0]}" in executor.workers_lost[0]
    assert executor.workers == 2, "the lost worker was replaced"
    assert killer.killed[0] not in {w.pid for w in executor.pool}


def test_ray_candidate_whose_workers_both_die_fails_with_the_reason(executor):
    lost_before = len(executor.workers_lost)
    killer = Killer(executor, times=2)
    killer.start()
    try:
        verdicts = executor.evaluate_all([candidate(HONEST, "doomed")])
    finally:
        killer.stop.set()
        killer.join(timeout=10)
    assert len(killer.killed) == 2
    (verdict,) = verdicts
    assert verdict.candidate_id == "doomed" and not verdict.verified
    failure = verdict.failure
    assert failure is not None and failure.kind == FailureKind.CRASH and failure.stage == Stage.RUN
    assert failure.rule == "lost_worker"
    for pid in killer.killed:
        assert f"pid {pid}" in failure.message
    assert len(executor.workers_lost) == lost_before + 2
    # the run goes on: both workers were replaced and evaluate the next candidate
    assert executor.workers == 2
    (after,) = executor.evaluate_all([candidate(HONEST, "after")])
    assert after.verified


def test_ray_close_releases_every_actor(executor):
    pids = [w.pid for w in executor.pool]
    assert all("ray::EvaluationWorker" in proc_cmdline(pid) for pid in pids)
    executor.close()
    assert executor.workers == 0 and RayExecutor._current is None
    deadline = time.monotonic() + 60
    alive = pids
    while alive and time.monotonic() < deadline:
        alive = [pid for pid in pids if Path(f"/proc/{pid}").exists() and "ray::" in proc_cmdline(pid)]
        time.sleep(0.5)
    assert not alive, f"actor processes {alive} still run"


def proc_cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return ""


def test_ray_asking_for_a_gpu_the_cluster_lacks_fails_fast(cluster, recipe):
    started = time.monotonic()
    with pytest.raises(FatalError, match=r"1 GPU worker\(s\) asked for, but the Ray cluster has 0 GPU"):
        RayExecutor(recipe, gpus=1, timeouts=TIMEOUTS)
    assert time.monotonic() - started < 30


def test_ray_worker_that_cannot_be_scheduled_fails_within_its_bound(cluster, recipe):
    from ray.util.placement_group import placement_group, remove_placement_group

    hold = placement_group([{"CPU": 2}])  # every CPU taken: no evaluation actor can be placed
    ray.get(hold.ready(), timeout=60)
    started = time.monotonic()
    try:
        with pytest.raises(FatalError, match="not started within 3 s"):
            RayExecutor(recipe, cpu_workers=1, timeouts=RayTimeouts(start_s=3, poll_s=0.5, get_s=5))
    finally:
        remove_placement_group(hold)
    assert time.monotonic() - started < 30


@pytest.mark.parametrize("slots", [2, 1])
def test_ray_actor_takes_as_many_candidates_at_once_as_it_has_slots(cluster, slots):
    """One actor, two candidates that each wait for the other inside it: with two slots they meet (both
    were in the actor at once); with one slot, the control, the first waits alone and gives up."""
    import ray_doubles

    ray.cloudpickle.register_pickle_by_value(ray_doubles)
    factory = ray_doubles.BarrierFactory(parties=2, wait_s=5.0)
    with RayExecutor(factory, cpu_workers=1, slots_per_worker=slots, timeouts=TIMEOUTS) as executor:
        assert len(executor.pool) == 1 and executor.workers == slots
        verdicts = executor.evaluate_all([Candidate(id=f"meet-{i}", source="") for i in range(2)])
        assert [v.candidate_id for v in verdicts] == ["meet-0", "meet-1"]
        if slots == 2:
            assert all(v.verified for v in verdicts), [v.failure.message for v in verdicts if v.failure]
        else:
            assert not verdicts[0].verified and verdicts[0].failure.rule == "barrier"
        assert len(executor.idle) == slots, "every slot is free again"
    assert executor.workers == 0


def test_ray_actor_lost_with_several_candidates_is_replaced_once(cluster, recipe):
    """An actor with two slots killed while it holds two candidates: both are retried, one replacement."""
    with RayExecutor(recipe, cpu_workers=1, slots_per_worker=2, timeouts=TIMEOUTS) as executor:
        killer = Killer(executor, times=1)
        killer.start()
        try:
            verdicts = executor.evaluate_all([candidate(HONEST, f"pair-{i}") for i in range(2)])
        finally:
            killer.stop.set()
            killer.join(timeout=10)
        assert len(killer.killed) == 1
        assert [v.candidate_id for v in verdicts] == ["pair-0", "pair-1"], "nothing lost"
        assert all(v.verified for v in verdicts), [v.failure.headline() for v in verdicts if v.failure]
        assert len(executor.workers_lost) == 1, executor.workers_lost
        assert len(executor.pool) == 1 and executor.workers == 2, "one replacement with both slots"


@pytest.mark.parametrize("driver", [None, "2"])
def test_ray_actor_children_get_the_drivers_thread_setting_not_rays(cluster, driver, monkeypatch):
    """Ray sets OMP_NUM_THREADS=1 in every actor (its num_cpus); the actor restores the driver's value, or
    unsets it, so that candidate children and the actor's torch use the cores as under the local executor."""
    import ray_doubles

    if driver is None:
        monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    else:
        monkeypatch.setenv("OMP_NUM_THREADS", driver)
    ray.cloudpickle.register_pickle_by_value(ray_doubles)
    with RayExecutor(ray_doubles.ThreadsFactory(), cpu_workers=1, timeouts=TIMEOUTS) as executor:
        [verdict] = executor.evaluate_all([Candidate(id="threads", source="")])
    if driver is None:
        # unset: torch's own default (the physical cores), as in a process started from the driver
        probe = "import torch; print(torch.get_num_threads())"
        env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
        default = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=120)
        assert verdict.checks_passed == (
            "child OMP_NUM_THREADS=unset",
            f"child torch threads={default.stdout.strip()}",
            f"actor torch threads={default.stdout.strip()}",
        )
    else:
        assert verdict.checks_passed == (
            "child OMP_NUM_THREADS=2",
            "child torch threads=2",
            "actor torch threads=2",
        )
