"""The quota table is the one source of docs/quotas.md, and every row says where AWS documents
its number."""

from __future__ import annotations

from pathlib import Path

from stacks.quotas import QUOTAS, quotas_markdown
from stacks.quotas.table import CLOUDFORMATION_OUTPUTS, CLOUDFORMATION_RESOURCES

ROOT = Path(__file__).resolve().parents[3]


def test_docs_quotas_md_is_the_table_rendered() -> None:
    assert (ROOT / "docs" / "quotas.md").read_text(encoding="utf-8") == quotas_markdown()


def test_every_row_cites_aws_documentation_and_says_how_it_is_counted() -> None:
    for quota in QUOTAS:
        assert quota.source.startswith("https://docs.aws.amazon.com/"), quota.name
        assert quota.counted, quota.name
        assert quota.fix, quota.name
    assert len({quota.name for quota in QUOTAS}) == len(QUOTAS)


def test_cloudformation_takes_500_resources_and_200_outputs_per_stack() -> None:
    assert (CLOUDFORMATION_RESOURCES.fixed, CLOUDFORMATION_OUTPUTS.fixed) == (500, 200)
