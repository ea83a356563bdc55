"""What the constructs' tests share."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import Stack

from constructs_lib import DeliveryLoggedTopic, SnsHttpsEndpoint


@pytest.fixture
def partner_handler(tmp_path: Path) -> Path:
    """A team's handler package, ``partner``, whose ``partner.handler:handle`` an SNS HTTPS
    endpoint may call."""
    package = tmp_path / "partner"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "handler.py").write_text("def handle(notification):\n    return None\n")
    return package


@pytest.fixture
def partner_endpoint(partner_handler: Path) -> Callable[..., SnsHttpsEndpoint]:
    """Builds, in a stack, a topic ``T`` and an SNS HTTPS endpoint ``E`` subscribed to it that
    calls ``partner.handler:handle``, with the keywords given."""

    def build(stack: Stack, **keywords: Any) -> SnsHttpsEndpoint:
        arguments: dict[str, Any] = {
            "handler": "partner.handler:handle",
            "handler_code": partner_handler,
            **keywords,
        }
        topic = DeliveryLoggedTopic(stack, "T", topic_name="T")
        return SnsHttpsEndpoint(stack, "E", topic=topic, **arguments)

    return build
