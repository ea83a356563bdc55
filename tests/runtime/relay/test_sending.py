"""SendMessage through one SQS client per region, created on first use."""

from __future__ import annotations

from typing import Any

from cross_account_runtime.relay.sending import SqsClients


def test_clients_are_created_lazily_once_per_region() -> None:
    created: list[str] = []

    class Client:
        def __init__(self, region: str) -> None:
            self.region = region

        def send_message(self, **request: Any) -> dict[str, str]:
            return {"MessageId": f"{self.region}:{request['QueueUrl']}"}

    def create(region: str) -> Client:
        created.append(region)
        return Client(region)

    clients = SqsClients(create)
    assert created == []
    assert clients.send("us-east-1", {"QueueUrl": "q1"}) == "us-east-1:q1"
    assert clients.send("eu-west-1", {"QueueUrl": "q2"}) == "eu-west-1:q2"
    assert clients.send("us-east-1", {"QueueUrl": "q3"}) == "us-east-1:q3"
    assert created == ["us-east-1", "eu-west-1"]
