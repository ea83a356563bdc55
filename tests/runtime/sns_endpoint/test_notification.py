"""What the configured handler receives: the verified message and its whole envelope."""

from __future__ import annotations

from cross_account_runtime.sns_endpoint.notification import Notification


def notification(envelope: dict[str, object]) -> Notification:
    return Notification(
        message_id="22b80b92-fdea-4c2c-8f9d-bdfb0c7bf324",
        topic_arn="arn:aws:sns:us-east-1:111111111111:Orders",
        message='{"orderId": 42}',
        timestamp="2026-06-01T12:00:00.000Z",
        subject=None,
        envelope=envelope,
    )


def test_the_message_attributes_come_from_the_envelope() -> None:
    attributes = {"Tenant": {"Type": "String", "Value": "acme"}}
    assert notification({"MessageAttributes": attributes}).message_attributes == attributes


def test_a_message_without_attributes_has_none() -> None:
    assert notification({}).message_attributes == {}
    assert notification({"MessageAttributes": None}).message_attributes == {}


def test_the_envelope_stays_out_of_the_repr_so_logs_do_not_carry_whole_bodies() -> None:
    assert "envelope" not in repr(notification({"Message": "secret"}))
