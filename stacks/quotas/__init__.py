"""The quota gate: every synthesized template checked against each documented AWS quota the
local AWS does not enforce (``docs/quotas.md``).

:mod:`~stacks.quotas.table` holds the numbers, their sources and how each is counted;
:mod:`~stacks.quotas.assembly` reads the templates and resolves their intrinsics;
:mod:`~stacks.quotas.measures` measures them. :func:`quota_problems` is what the synth
gate (:func:`stacks.checks.gates.synth`) refuses with, one line per problem.
"""

from pathlib import Path

from stacks.quotas.assembly import QuotaGateError, StackTemplate, read_templates
from stacks.quotas.markdown import largest_uses, quotas_markdown, usage_line
from stacks.quotas.measures import Measurement, measure
from stacks.quotas.table import QUOTAS, Bound, Quota


def measure_assembly(assembly_dir: str | Path) -> list[Measurement]:
    """Every measurement of every quota in the cloud assembly in ``assembly_dir``."""
    return measure(read_templates(assembly_dir))


def quota_problems(assembly_dir: str | Path) -> list[str]:
    """One line per quota the assembly's templates cross, in template order."""
    crossing = [m for m in measure_assembly(assembly_dir) if m.crosses]
    return [m.problem() for m in sorted(crossing, key=lambda m: (m.template, m.resource))]


class QuotaError(RuntimeError):
    """Templates AWS would refuse: the message has one line per problem."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("\n".join(problems))


def require_within_quotas(assembly_dir: str | Path) -> None:
    """Raise :class:`QuotaError` with a line per AWS quota a template of the assembly crosses."""
    problems = quota_problems(assembly_dir)
    if problems:
        raise QuotaError(problems)


__all__ = [
    "QUOTAS",
    "Bound",
    "Measurement",
    "Quota",
    "QuotaError",
    "QuotaGateError",
    "StackTemplate",
    "largest_uses",
    "measure",
    "measure_assembly",
    "quota_problems",
    "quotas_markdown",
    "read_templates",
    "require_within_quotas",
    "usage_line",
]
