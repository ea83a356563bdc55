"""Errors the job reports to the operator instead of a stack trace, and the exit code of each.

The exit codes are defined here and nowhere else: the command line returns the code of the
error it caught, so a scheduler (or a person reading its log) can tell a run pointed at the
wrong files from one that could not write its report without reading the message.
"""

from __future__ import annotations

from typing import ClassVar


class JobError(Exception):
    """A failure the operator can act on; the message names what failed, why and the fix."""

    exit_code: ClassVar[int]


class AccountingError(JobError):
    """Records were lost between reading and writing: read != parsed + rejected."""

    exit_code = 1


class InputError(JobError):
    """The command line names input the job cannot use; the message says what and how to fix it."""

    exit_code = 2


class SideError(JobError):
    """A failure on one side of the job, input or output, at a path: ``<side> <path>: <cause>;
    <fix>``, so the one line a scheduler keeps says which side to look at."""

    side: ClassVar[str]

    def __init__(self, path: str, cause: str, fix: str) -> None:
        super().__init__(f"{self.side} {path}: {cause}; {fix}")
        self.path = path
        self.cause = cause


class InputUnreadableError(SideError):
    """An input could not be listed or read (a truncated or corrupt ``.gz``, an unreachable
    bucket)."""

    side = "input"
    exit_code = 3


class OutputUnwritableError(SideError):
    """The output location cannot take the report (a file in the way, no permission, no space)."""

    side = "output"
    exit_code = 4


class TooLittleParsedError(SideError):
    """The input was read but too little of it is delivery-status records (the wrong prefix,
    binary files, other JSON, a previous report): the report was written, the run is not good."""

    side = "input"
    exit_code = 5


class SparkFailureError(JobError):
    """Spark failed and neither the input nor the output is named in its error."""

    exit_code = 6
