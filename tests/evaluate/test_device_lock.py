"""The GPU's shared/exclusive lock: correctness runs overlap, a timing run is alone, and a waiting
timing run is not starved by a stream of correctness runs."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from foundry.core.records import Diagnosis, FailureKind, Stage
from foundry.evaluate.device_lock import Admission, DeviceGate, DeviceLock, lock_dir
from foundry.evaluate.evaluator import CandidateEvaluator, EvaluatorConfig, memory_share, physical_gpu
from foundry.spec.loader import load_operator

WAIT = 5.0


def test_shared_holders_overlap():
    lock = DeviceLock()
    inside = threading.Barrier(3, timeout=WAIT)  # only passes if all three hold the lock at once

    def run():
        with lock.shared():
            inside.wait()

    threads = [threading.Thread(target=run) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT)
    assert not any(t.is_alive() for t in threads)
    assert lock.sharing == 0


def test_exclusive_waits_for_sharers_and_blocks_new_ones():
    lock = DeviceLock()
    events: list[str] = []
    lock.acquire_shared()  # a correctness run in progress

    def timing():
        with lock.exclusive():
            events.append("timing start")
            time.sleep(0.05)
            events.append("timing end")

    timer = threading.Thread(target=timing)
    timer.start()
    deadline = time.monotonic() + WAIT
    while lock.exclusive_waiting == 0 and time.monotonic() < deadline:
        time.sleep(0.005)
    assert lock.exclusive_waiting == 1

    def late_correctness():
        with lock.shared():
            events.append("late correctness")

    late = threading.Thread(target=late_correctness)
    late.start()
    time.sleep(0.05)
    assert events == []  # the timing run waits for the running correctness run, the late one waits too
    events.append("first correctness done")
    lock.release_shared()
    timer.join(WAIT)
    late.join(WAIT)
    assert events == ["first correctness done", "timing start", "timing end", "late correctness"]


def test_two_exclusive_holders_never_overlap():
    lock = DeviceLock()
    holders = []
    overlap = []

    def timing():
        for _ in range(20):
            with lock.exclusive():
                holders.append(1)
                if len(holders) > 1:
                    overlap.append(True)
                time.sleep(0.001)
                holders.pop()

    threads = [threading.Thread(target=timing) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT)
    assert overlap == []
    assert not lock.exclusive_held


def test_release_without_acquire_is_an_error():
    lock = DeviceLock()
    with pytest.raises(RuntimeError):
        lock.release_shared()
    with pytest.raises(RuntimeError):
        lock.release_exclusive()


def test_gate_steps_once_and_releases_in_any_state():
    lock = DeviceLock()
    gate = DeviceGate(lock)
    gate.share()
    assert lock.sharing == 1
    gate.exclude()  # gives the shared hold back before taking the exclusive one
    assert lock.sharing == 0 and lock.exclusive_held
    gate.release()
    gate.release()
    assert not lock.exclusive_held
    gate.exclude()  # a finished gate does not take the device again
    assert not lock.exclusive_held

    other = DeviceGate(lock)
    other.share()
    other.release()
    assert lock.sharing == 0
    DeviceGate(None).share()  # without a GPU there is nothing to hold


def test_gate_frees_the_device_between_stages_and_takes_it_again():
    lock = DeviceLock()
    gate = DeviceGate(lock)
    gate.share()
    gate.free()  # e.g. while the job files are written: a timing run may go now
    assert lock.sharing == 0 and not lock.exclusive_held
    timer = DeviceGate(lock)
    timer.exclude()  # nothing holds the device: no wait
    timer.free()
    gate.share()  # the same evaluation takes it again for its next stage
    assert lock.sharing == 1
    gate.exclude()
    assert lock.sharing == 0 and lock.exclusive_held
    gate.free()
    assert not lock.exclusive_held
    gate.free()  # nothing held: nothing to give back
    gate.release()
    gate.share()  # released for good
    assert lock.sharing == 0


def test_child_sees_only_its_gpu(monkeypatch):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert physical_gpu(1) == "1"
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "4, 6")
    assert physical_gpu(0) == "4"
    assert physical_gpu(1) == "6"


# -- between processes: the lock files of one GPU ------------------------------------------------------

HOLDER = """
import sys, time
from pathlib import Path
from foundry.evaluate.device_lock import DeviceLock
path, mode, hold, log = Path(sys.argv[1]), sys.argv[2], float(sys.argv[3]), Path(sys.argv[4])
lock = DeviceLock(path)
with log.open("a") as f:
    f.write("asking\\n"); f.flush()
    with (lock.exclusive() if mode == "exclusive" else lock.shared()):
        f.write(mode + " got\\n"); f.flush()
        time.sleep(hold)
        f.write(mode + " done\\n"); f.flush()
"""


def holder(tmp_path: Path, mode: str, hold: float) -> tuple[subprocess.Popen, Path]:
    log = tmp_path / f"{mode}-{time.monotonic_ns()}.log"
    log.touch()
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(tmp_path / "gpu.lock"), mode, str(hold), str(log)])
    return proc, log


def wait_for(predicate, what: str) -> None:
    deadline = time.monotonic() + 30
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


def turnstile_taken(path: Path) -> bool:
    fd = os.open(f"{path}.turnstile", os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def test_a_timing_run_in_one_process_keeps_another_process_off_the_gpu(tmp_path):
    lock = DeviceLock(tmp_path / "gpu.lock")
    with lock.exclusive():
        proc, log = holder(tmp_path, "shared", 0)
        wait_for(lambda: "asking" in log.read_text(), "the other process to ask")
        time.sleep(0.3)
        assert "shared got" not in log.read_text()  # it waits while this process times
    assert proc.wait(timeout=30) == 0
    assert "shared got" in log.read_text()


def test_correctness_runs_of_two_processes_overlap(tmp_path):
    lock = DeviceLock(tmp_path / "gpu.lock")
    with lock.shared():
        proc, log = holder(tmp_path, "shared", 0)
        wait_for(lambda: "shared done" in log.read_text(), "the other process to share the GPU")
    assert proc.wait(timeout=30) == 0


def test_a_waiting_timing_run_in_another_process_goes_before_new_correctness_runs(tmp_path):
    path = tmp_path / "gpu.lock"
    lock = DeviceLock(path)
    order: list[str] = []
    token = lock.acquire_shared()  # a correctness run of this process, in progress
    proc, log = holder(tmp_path, "exclusive", 0.2)
    wait_for(lambda: turnstile_taken(path), "the other process's timing run to queue")

    def late_correctness():
        with lock.shared():
            order.append("late correctness" if "exclusive done" in log.read_text() else "late overtook")

    late = threading.Thread(target=late_correctness)
    late.start()
    time.sleep(0.2)
    assert "exclusive got" not in log.read_text()  # still waiting for the running correctness run
    lock.release_shared(token)
    late.join(30)
    assert proc.wait(timeout=30) == 0
    assert order == ["late correctness"]


def test_a_dead_holder_leaves_the_gpu_free(tmp_path):
    proc, log = holder(tmp_path, "exclusive", 60)
    wait_for(lambda: "exclusive got" in log.read_text(), "the other process to hold the GPU")
    proc.kill()
    proc.wait(timeout=30)
    lock = DeviceLock(tmp_path / "gpu.lock")
    done = threading.Event()

    def take():
        with lock.exclusive():
            done.set()

    t = threading.Thread(target=take)
    t.start()
    t.join(30)
    assert done.is_set()


def test_lock_files_live_in_the_configured_directory(tmp_path, monkeypatch):
    monkeypatch.setenv("FOUNDRY_LOCK_DIR", str(tmp_path / "locks"))
    assert lock_dir() == tmp_path / "locks"
    DeviceLock(lock_dir() / "gpu-x.lock")
    assert (tmp_path / "locks").is_dir()


def test_workers_share_the_device_memory_the_evaluator_does_not_hold():
    gib = 1024**3
    total = 140 * gib
    # small reference outputs: the even split of the evaluator's share
    assert memory_share(0.85, 4, 1024, total) == pytest.approx(0.85 / 4, rel=1e-6)
    # 2 GiB of reference outputs per candidate in flight, 8 in flight: 16 GiB less for the workers
    assert memory_share(0.85, 8, 2 * gib, total) * total == pytest.approx((0.85 * total - 16 * gib) / 8)
    # outputs too large to leave the workers much: a quarter of the even split (a worker that needs more runs
    # out of memory, and its candidate is evaluated again alone)
    assert memory_share(0.85, 8, 20 * gib, total) == pytest.approx(0.85 / 8 / 4)
    # the caps of the workers and what the evaluator holds fit in its share whenever the floor is not reached
    for held in (0, gib, 4 * gib, 10 * gib):
        share = memory_share(0.85, 8, held, total)
        if share > 0.85 / 32:
            assert 8 * (share * total + held) <= 0.85 * total + 1


def test_admission_keeps_at_most_its_limit_in_flight_and_shrinks_to_one():
    admission = Admission(2)
    active, peak, lock = [0], [0], threading.Lock()
    release = threading.Event()

    def run():
        with admission.slot():
            with lock:
                active[0] += 1
                peak[0] = max(peak[0], active[0])
            release.wait(5)
            with lock:
                active[0] -= 1

    threads = [threading.Thread(target=run) for _ in range(5)]
    for t in threads:
        t.start()
    time.sleep(0.2)
    assert active[0] == 2  # the other three wait for a slot
    release.set()
    for t in threads:
        t.join(5)
    assert peak[0] == 2 and admission.active == 0
    admission.shrink(2)
    admission.shrink(1)
    assert admission.limit == 1  # never below one


def test_candidates_that_ran_out_of_memory_together_lower_the_limit_once():
    admission = Admission(8)
    with admission.slot() as first, admission.slot() as second:
        assert first == second == 8
        admission.shrink(first)
        admission.shrink(second)  # admitted under the same limit: no second step down
    assert admission.limit == 7
    with admission.slot() as third:
        assert third == 7
    admission.shrink(third)  # admitted under the lowered limit: it steps down again
    admission.shrink(8)  # a late report from under the old limit changes nothing
    assert admission.limit == 6


def oom(evaluator, candidate, started):
    diag = Diagnosis(stage=Stage.RUN, kind=FailureKind.OOM, rule="signal", message="died of SIGKILL")
    return evaluator.verdict(candidate, [diag], [], started)


@pytest.mark.parametrize(
    ("workers", "shared_run", "alone_run", "limit_after"),
    [
        (3, "evaluator_oom", "verified", 2),  # the evaluator itself ran out beside others: one fewer from now on
        (3, "worker_oom", "verified", 2),  # the worker fits alone: its share was too small
        (3, "worker_oom", "worker_oom", 3),  # it runs out alone too: the candidate's doing, not the sharing's
        (3, "verified", None, 3),
        (1, "worker_oom", None, 1),  # alone already: the out-of-memory verdict stands
    ],
)
def test_running_out_of_memory_beside_others_is_evaluated_again_alone_and_lowers_the_candidates_in_flight(
    monkeypatch, workers, shared_run, alone_run, limit_after
):
    """Each candidate that ran out of device memory beside others is evaluated again alone before its verdict
    stands; where it fits alone, the evaluator takes one candidate fewer at once from then on."""
    import torch
    from foundry.core.records import Candidate

    operator = load_operator(str(Path(__file__).resolve().parents[1] / "cheats" / "operators" / "softmax_rows.py"))
    # the stages are replaced below: the static guard would stop this source before them
    evaluator = CandidateEvaluator(operator, config=EvaluatorConfig(static_guard=False), device="cpu")
    evaluator.concurrency = workers  # as on a GPU with that many workers
    evaluator.admission = Admission(workers)
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda: None)
    runs = []

    def run_isolated(candidate, warnings, started, alone=False):
        what = alone_run if alone else shared_run
        runs.append(("alone" if alone else "shared", what))
        if what == "evaluator_oom":
            raise torch.cuda.OutOfMemoryError("CUDA out of memory")
        if what == "worker_oom":
            return oom(evaluator, candidate, started)
        return evaluator.verdict(candidate, [], [], started)

    evaluator.run_isolated = run_isolated  # type: ignore[method-assign]
    verdict = evaluator.evaluate(Candidate(id="c1", source="class ModelNew: ...\n"))
    assert evaluator.admission.limit == limit_after
    assert [r[0] for r in runs] == (["shared", "alone"] if alone_run else ["shared"])
    assert verdict.verified == ((alone_run or shared_run) == "verified")
