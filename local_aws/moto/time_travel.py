"""Time travel for the local AWS's SQS messages: every message ages by a number of seconds.

NServiceBus delays sends over 15 minutes through a FIFO delay queue whose own delay is at least
900 s, and retries through it too; a demo or a test cannot wait that long. moto keeps, per
message, when it was sent, when its delay ends and when it becomes visible again, all in real
time. Ageing moves those three instants (and the first-receive time) back by the same amount:
the message is exactly as it would be that many seconds later, while every clock (moto's, the
tests', a relay's ``time.time()``) keeps telling the real time. A delay that has run out makes
the message receivable; ``now - SentTimestamp`` grows by the amount, as NServiceBus's delayed
messages pump expects; FIFO deduplication windows close as they would.

``POST /moto-api/local-aws/sqs/age-messages?seconds=N`` ages every message of every queue in
every account and region and answers ``{"aged": <messages>}``. moto has no such call; the local
AWS server registers it (:func:`register`) before it starts serving.
"""

from __future__ import annotations

from typing import Any

from local_aws.moto.api_routes import add_route, ageing_route, request_ageing

AGE_MESSAGES_PATH = "/moto-api/local-aws/sqs/age-messages"
"""The route, relative to the server's root."""


def age_messages(seconds: float) -> int:
    """Age every SQS message by ``seconds``; returns how many messages there were."""
    from moto.sqs.models import sqs_backends  # noqa: PLC0415 (moto loads its services lazily)

    shift_ms = seconds * 1000
    aged = 0
    for account_backends in list(sqs_backends.values()):
        for backend in list(account_backends.values()):
            for queue in list(backend.queues.values()):
                with queue._messages_lock:
                    # moto declares sent_timestamp as None until the message is sent.
                    messages: list[Any] = queue._messages
                    for message in messages:
                        message.sent_timestamp -= int(shift_ms)
                        message.delayed_until -= shift_ms
                        message.visible_at -= shift_ms
                        if message.approximate_first_receive_timestamp:
                            message.approximate_first_receive_timestamp -= int(shift_ms)
                        aged += 1
                    queue._messages_lock.notify_all()
    return aged


def register() -> None:
    """Add the route to moto's own API (the ``/moto-api/`` paths) before the server starts."""
    add_route(AGE_MESSAGES_PATH, ageing_route(age_messages, "aged", example_seconds=900))


def age_sqs_messages(endpoint_url: str, seconds: float) -> int:
    """Ask the local AWS at ``endpoint_url`` to age every SQS message by ``seconds``; returns
    how many messages were aged."""
    return request_ageing(endpoint_url, AGE_MESSAGES_PATH, seconds, "aged")
