"""The cost report: what a topology's synthesized templates cost (``docs/costs.md``).

:mod:`~stacks.checks.cost_report.prices` holds AWS's unit prices and their date,
:mod:`~stacks.checks.cost_report.usage` what the report assumes about traffic,
:mod:`~stacks.checks.cost_report.report` counts and prices what the templates deploy.
"""

from stacks.checks.cost_report.markdown import prices_markdown, to_markdown
from stacks.checks.cost_report.report import CostReport, build_cost_report

__all__ = ["CostReport", "build_cost_report", "prices_markdown", "to_markdown"]
