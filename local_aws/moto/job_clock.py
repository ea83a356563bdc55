"""Jobs on a clock of their own: the real time plus whatever was aged.

SNS's HTTP/S retries wait up to an hour between attempts; a demo or a test cannot. Jobs are
scheduled at instants of this clock and run in order on a thread of their own when they fall
due; :meth:`JobClock.age` moves the clock on and runs, before it returns, every job then due,
including the ones those jobs schedule within the aged span, each at its own instant: a schedule
of an hour runs in a moment with its spacing intact.
"""

from __future__ import annotations

import heapq
import itertools
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field

Job = Callable[[float], None]
"""A job; it is given the instant it was due at."""


@dataclass(order=True)
class _Scheduled:
    at: float
    seq: int
    run: Job = field(compare=False)


class JobClock:
    """A clock that ages, and the jobs due on it."""

    def __init__(self) -> None:
        self._jobs: list[_Scheduled] = []
        self._seq = itertools.count()
        self._offset = 0.0
        self._changed = threading.Condition()
        self._running = threading.Lock()
        self._thread: threading.Thread | None = None

    def now(self) -> float:
        return time.time() + self._offset

    def schedule(self, at: float, run: Job) -> None:
        with self._changed:
            heapq.heappush(self._jobs, _Scheduled(at, next(self._seq), run))
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._loop, name="local-aws-job-clock", daemon=True
                )
                self._thread.start()
            self._changed.notify()

    def age(self, seconds: float) -> int:
        with self._changed:
            self._offset += seconds
            self._changed.notify()
        return self.run_due()

    def run_due(self) -> int:
        """Run every job due by now, in order (a retry due by now included); the count."""
        ran = 0
        with self._running:
            while True:
                with self._changed:
                    if not self._jobs or self._jobs[0].at > self.now():
                        return ran
                    job = heapq.heappop(self._jobs)
                job.run(job.at)
                ran += 1

    def _loop(self) -> None:
        while True:
            with self._changed:
                wait = self._jobs[0].at - self.now() if self._jobs else None
                if wait is None or wait > 0:
                    self._changed.wait(timeout=wait)
                    continue
            try:
                self.run_due()
            except Exception:
                # A defect in one job must not stop every later one: it goes to the server's
                # log (an ageing request that meets it fails with it instead).
                traceback.print_exc(file=sys.stderr)
