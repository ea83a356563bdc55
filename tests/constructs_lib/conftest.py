"""What the constructs' tests share."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def partner_handler(tmp_path: Path) -> Path:
    """A team's handler package, ``partner``, whose ``partner.handler:handle`` an SNS HTTPS
    endpoint may call."""
    package = tmp_path / "partner"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "handler.py").write_text("def handle(notification):\n    return None\n")
    return package
