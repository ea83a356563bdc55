"""Topologies of real organizations' sizes, for the synth bench, the quota checks and the slow
deployment run: ``python bench/scale_topologies.py`` writes ``topologies/org.json`` (the
organization) and prints the names of the others, which :func:`topology` builds by name.

The organization: 30 accounts (Ops and 29 teams' accounts of 17 released endpoints each, 493
endpoints), ServiceControl's four queues and the analytics in Ops, every endpoint routed through
the bridge to one endpoint of the next account (which replies), nine event topics each published
in one account and subscribed natively by endpoints of three later accounts (no two accounts
subscribe to each other's topics), one endpoint every other account's endpoints send to, and
large messages on.

The cases of the issue that found the limits, each a topology of its own:

* ``fifty_accounts``: 50 accounts with one endpoint each (the error queue's policy names them
  all);
* ``receiver_of_twenty``: one released receiver reached from 20 accounts;
* ``subscriber_of_twenty_five``: one endpoint subscribed to 25 topics of 25 accounts;
* ``one_account_two_hundred``: 200 endpoints in one account;
* ``ring_ten_by_fifty``: 10 accounts x 50 endpoints, each routed to one of the next account.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
ORG_FILE = ROOT / "topologies" / "org.json"
REGION = "eu-west-1"
OPS_ID = "999999999999"
ORGANIZATION_ID = "o-a1b2c3d4e5"


def account_id(number: int) -> str:
    return f"{100000000000 + number:012d}"


def accounts(count: int) -> list[dict[str, Any]]:
    """``count`` teams' accounts ``Team01``... and Ops, in one organization."""
    return [
        {
            "name": f"Team{a:02d}",
            "id": account_id(a),
            "region": REGION,
            "organizationId": ORGANIZATION_ID,
        }
        for a in range(1, count + 1)
    ] + [{"name": "Ops", "id": OPS_ID, "region": REGION, "organizationId": ORGANIZATION_ID}]


def endpoint_name(account: int, index: int) -> str:
    return f"Team{account:02d}.Service{index:02d}"


def endpoints(account_count: int, per_account: int) -> list[dict[str, Any]]:
    return [
        {"name": endpoint_name(a, e), "account": f"Team{a:02d}"}
        for a in range(1, account_count + 1)
        for e in range(1, per_account + 1)
    ]


def ring_routes(account_count: int, per_account: int) -> list[dict[str, Any]]:
    """Each endpoint sends, through the bridge, to the endpoint of the same index in the next
    account, which replies."""
    return [
        {
            "from": endpoint_name(a, e),
            "to": endpoint_name(a % account_count + 1, e),
            "relay": True,
        }
        for a in range(1, account_count + 1)
        for e in range(1, per_account + 1)
    ]


def platform_queues() -> dict[str, Any]:
    return {
        "errorQueue": {"name": "error", "account": "Ops"},
        "auditQueue": {"name": "audit", "account": "Ops"},
        "serviceControlQueue": {"name": "Particular.ServiceControl", "account": "Ops"},
        "monitoringQueue": {"name": "Particular.Monitoring", "account": "Ops"},
    }


def organization(account_count: int = 30, endpoint_count: int = 500) -> dict[str, Any]:
    """The organization of the module's docstring with ``account_count`` accounts (Ops and the
    teams') and about ``endpoint_count`` endpoints, spread evenly over the teams' accounts (the
    default: 29 accounts of 17, 493 endpoints)."""
    teams = account_count - 1
    per_account = max(4, endpoint_count // teams)
    central = endpoint_name(1, 1)
    routes = ring_routes(teams, per_account)
    # Every other account's second endpoint also sends to one central endpoint.
    routes += [
        {"from": endpoint_name(a, 2), "to": central, "relay": True} for a in range(2, teams + 1)
    ]
    # A topic in each of the first accounts, subscribed by three later ones: no two accounts
    # subscribe to each other's topics.
    publishing = max(1, min(10, teams // 3))
    topics = [
        {
            "eventType": f"Team{a:02d}.Events.Happened",
            "account": f"Team{a:02d}",
            "publishers": [endpoint_name(a, 3)],
            "subscriptions": [
                {
                    "name": f"Team{s:02d}",
                    "protocol": "sqs",
                    "endpoint": endpoint_name(s, 4),
                }
                for s in range(a + publishing, a + publishing + 3)
                if s <= teams
            ],
        }
        for a in range(1, publishing + 1)
    ]
    return {
        "accounts": accounts(teams),
        "endpoints": endpoints(teams, per_account),
        **platform_queues(),
        "routes": routes,
        "topics": topics,
        "analytics": {"account": "Ops"},
        "largeMessages": {"expirationDays": 4},
    }


def fifty_accounts() -> dict[str, Any]:
    return {
        "accounts": accounts(50),
        "endpoints": endpoints(50, 1),
        "errorQueue": {"name": "error", "account": "Ops"},
        "routes": ring_routes(50, 1),
    }


def receiver_of_twenty() -> dict[str, Any]:
    receiver = endpoint_name(1, 1)
    return {
        "accounts": accounts(21),
        "endpoints": endpoints(21, 1),
        "errorQueue": {"name": "error", "account": "Ops"},
        "routes": [
            {"from": endpoint_name(a, 1), "to": receiver, "relay": True} for a in range(2, 22)
        ],
    }


def subscriber_of_twenty_five() -> dict[str, Any]:
    subscriber = endpoint_name(26, 1)
    return {
        "accounts": accounts(26),
        "endpoints": endpoints(26, 1),
        "errorQueue": {"name": "error", "account": "Ops"},
        "routes": [],
        "topics": [
            {
                "eventType": f"Team{a:02d}.Events.Happened",
                "account": f"Team{a:02d}",
                "publishers": [endpoint_name(a, 1)],
                "subscriptions": [
                    {"name": "Subscriber", "protocol": "sqs", "endpoint": subscriber}
                ],
            }
            for a in range(1, 26)
        ],
    }


def one_account_two_hundred() -> dict[str, Any]:
    return {
        "accounts": accounts(2),
        "endpoints": endpoints(1, 200) + endpoints(2, 1)[-1:],
        "errorQueue": {"name": "error", "account": "Ops"},
        "routes": [
            {"from": endpoint_name(1, e), "to": endpoint_name(2, 1), "relay": True}
            for e in range(1, 201)
        ],
    }


def ring_ten_by_fifty() -> dict[str, Any]:
    return {
        "accounts": accounts(10),
        "endpoints": endpoints(10, 50),
        "errorQueue": {"name": "error", "account": "Ops"},
        "routes": ring_routes(10, 50),
    }


TOPOLOGIES: dict[str, Callable[[], dict[str, Any]]] = {
    "organization": organization,
    "fifty_accounts": fifty_accounts,
    "receiver_of_twenty": receiver_of_twenty,
    "subscriber_of_twenty_five": subscriber_of_twenty_five,
    "one_account_two_hundred": one_account_two_hundred,
    "ring_ten_by_fifty": ring_ten_by_fifty,
}


def topology(name: str) -> dict[str, Any]:
    """The topology document called ``name`` (one of :data:`TOPOLOGIES`)."""
    return TOPOLOGIES[name]()


def main() -> None:
    ORG_FILE.parent.mkdir(exist_ok=True)
    ORG_FILE.write_text(json.dumps(organization(), indent=1) + "\n", encoding="utf-8")
    print(json.dumps({"written": str(ORG_FILE.relative_to(ROOT)), "cases": list(TOPOLOGIES)}))


if __name__ == "__main__":
    main()
