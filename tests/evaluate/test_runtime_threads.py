"""The runtime guard's thread check: threads a call left running are those alive that were not in the
baseline, by identity (the worker's baseline comes after the compile-ahead dry run, whose threads may end
while the first real call's run)."""

import threading

from foundry.evaluate.runtime_guard import live_threads


def test_a_thread_that_ended_does_not_hide_a_new_one():
    gate = threading.Event()
    old = threading.Thread(target=gate.wait)
    old.start()
    baseline = live_threads()  # the compile-ahead copy's thread, say
    gate.set()
    old.join()
    stop = threading.Event()
    new = threading.Thread(target=stop.wait)
    new.start()
    try:
        assert threading.active_count() == len(baseline)  # counting alone would see nothing new
        assert live_threads() - baseline == {new}
    finally:
        stop.set()
        new.join()
