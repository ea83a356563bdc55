"""The clock SNS's retries run on: ageing runs every job then due at its own instant, those
it schedules included, and a failing job stops no later one."""

from __future__ import annotations

import time

import pytest

from local_aws.moto.job_clock import JobClock


def test_ageing_runs_a_chain_of_jobs_each_at_its_own_instant() -> None:
    clock = JobClock()
    start = clock.now() + 100
    ran: list[float] = []

    def step(at: float) -> None:
        ran.append(round(at - start, 3))
        if len(ran) < 3:
            clock.schedule(at + 20, step)

    clock.schedule(start, step)

    assert clock.age(200) == 3
    assert ran == [0.0, 20.0, 40.0]


def test_a_failing_job_stops_no_later_one(capfd: pytest.CaptureFixture[str]) -> None:
    clock = JobClock()
    ran: list[str] = []

    def fail(_at: float) -> None:
        raise RuntimeError("a defect")

    clock.schedule(clock.now(), fail)
    clock.schedule(clock.now() + 0.05, lambda _at: ran.append("later"))
    deadline = time.monotonic() + 5
    while not ran and time.monotonic() < deadline:
        time.sleep(0.02)

    assert ran == ["later"]
    assert "RuntimeError: a defect" in capfd.readouterr().err
