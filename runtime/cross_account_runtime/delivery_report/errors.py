"""Errors the job reports to the operator instead of a stack trace."""

from __future__ import annotations


class InputError(Exception):
    """The command line names input the job cannot use; the message says what and how to fix it."""


class AccountingError(Exception):
    """Records were lost between reading and writing: read != parsed + rejected."""
