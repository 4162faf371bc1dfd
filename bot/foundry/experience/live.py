"""Which of a library's `running` runs a live process still owns.

A run's row says `running` from start_run until finish(). A process killed in between (SIGKILL, a lost
machine, a cancelled CI job) never finishes it. So each run on this machine leaves a marker beside the
library, `<library>.live/<run_id>` holding its host and process id: written before the run's row, removed
after its outcome is written. When a process first opens the library, a `running` run without a marker,
or whose marker names a process of this host that no longer exists, was abandoned: it is marked
`interrupted`. A marker of another host is left alone (that machine may still be working). The markers
stay out of the library itself: exports move between machines and carry no host names or paths.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import socket
from pathlib import Path

log = logging.getLogger(__name__)


def process_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    except OSError:
        return False
    return True


class LiveRuns:
    def __init__(self, library: Path) -> None:
        self.dir = library.with_name(library.name + ".live")

    def marker(self, run_id: str) -> Path:
        return self.dir / hashlib.sha256(run_id.encode()).hexdigest()[:32]  # run ids are any text

    def mark(self, run_id: str) -> None:
        """This process owns the run (call before its row is written)."""
        owner = {"run_id": run_id, "host": socket.gethostname(), "pid": os.getpid()}
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            self.marker(run_id).write_text(json.dumps(owner))
        except OSError as exc:  # the run goes on; another process may take it for abandoned
            log.warning("experience: cannot mark run %s live in %s: %s", run_id, self.dir, exc)

    def clear(self, run_id: str) -> None:
        """The run's outcome is written (or it was marked interrupted)."""
        try:
            self.marker(run_id).unlink(missing_ok=True)
        except OSError as exc:
            log.debug("experience: could not remove %s: %s", self.marker(run_id), exc)

    def abandoned(self, run_id: str) -> bool:
        """No process owns the run: no marker (killed before, or a row from elsewhere), or one naming a
        process of this host that has ended. False for a marker of another host."""
        try:
            owner = json.loads(self.marker(run_id).read_text())
        except FileNotFoundError:
            return True
        except (OSError, ValueError):
            return False  # unreadable: not ours to judge
        if not isinstance(owner, dict) or owner.get("host") != socket.gethostname():
            return False
        pid = owner.get("pid")
        return not (isinstance(pid, int) and process_exists(pid))
