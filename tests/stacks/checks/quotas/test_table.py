"""The quota table is the one source of docs/quotas.md, and every row says where AWS documents
its number."""

from __future__ import annotations

from pathlib import Path

from stacks.checks.quotas import QUOTAS, quotas_markdown
from stacks.checks.resource_limit import CLOUDFORMATION_OUTPUT_LIMIT, CLOUDFORMATION_RESOURCE_LIMIT

ROOT = Path(__file__).resolve().parents[4]


def test_docs_quotas_md_is_the_table_rendered() -> None:
    assert (ROOT / "docs" / "quotas.md").read_text(encoding="utf-8") == quotas_markdown()


def test_every_row_cites_aws_documentation_and_says_how_it_is_counted() -> None:
    for quota in QUOTAS:
        assert quota.source.startswith("https://docs.aws.amazon.com/"), quota.name
        assert quota.counted, quota.name
        assert quota.fix, quota.name
    assert len({quota.name for quota in QUOTAS}) == len(QUOTAS)


def test_the_limits_the_stacks_import_are_the_tables_numbers() -> None:
    assert (CLOUDFORMATION_RESOURCE_LIMIT, CLOUDFORMATION_OUTPUT_LIMIT) == (500, 200)
