"""SendMessageBatch through one SQS client per region, created on first use."""

from __future__ import annotations

from typing import Any

from cross_account_runtime.relay.sending import SqsClients


def test_clients_are_created_lazily_once_per_region() -> None:
    created: list[str] = []

    class Client:
        def __init__(self, region: str) -> None:
            self.region = region

        def send_message_batch(self, **request: Any) -> dict[str, Any]:
            (entry,) = request["Entries"]
            return {
                "Successful": [
                    {"Id": entry["Id"], "MessageId": f"{self.region}:{request['QueueUrl']}"}
                ]
            }

    def create(region: str) -> Client:
        created.append(region)
        return Client(region)

    clients = SqsClients(create)
    assert created == []
    entries = [{"Id": "0", "MessageBody": "m"}]
    assert clients.send_batch("us-east-1", "q1", entries).sent == {"0": "us-east-1:q1"}
    assert clients.send_batch("eu-west-1", "q2", entries).sent == {"0": "eu-west-1:q2"}
    assert clients.send_batch("us-east-1", "q3", entries).sent == {"0": "us-east-1:q3"}
    assert created == ["us-east-1", "eu-west-1"]
