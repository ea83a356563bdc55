"""The relay's configuration file, written at synth into its function's code asset: the routes,
the local endpoints and the address books, which Lambda's 4 KB of environment could not hold."""

from __future__ import annotations

import json
from collections.abc import Sequence

from aws_cdk import Stack, Token
from aws_cdk import aws_sqs as sqs

from constructs_lib._private.cdk_types import literal_queue_name
from constructs_lib.cross_account_relay.relay_route import RelayRoute
from cross_account_runtime.relay.config_format import (
    FILE_ADDRESS_BOOKS,
    FILE_DIRECTION,
    FILE_LOCAL_ENDPOINTS,
    FILE_ROUTES,
    RelayDirection,
)

CONFIGURATION_FILE = "relay-config.json"
"""The relay's configuration in its code asset, beside the runtime package (``RELAY_CONFIGURATION``
names it)."""


def configuration_file(
    stack: Stack,
    direction: RelayDirection,
    routes: Sequence[RelayRoute],
    local_endpoints: Sequence[str],
) -> str:
    """The configuration file's text: compact JSON, keys sorted, so that the same routes always
    give the same bytes (and the code asset the same hash: a synth that changes nothing
    redeploys no function). Routes whose released endpoints reach the same queues share one
    address book."""
    books: dict[str, dict[str, list[str]]] = {}
    members: dict[str, object] = {}
    for route in routes:
        source = _queue_reference(stack, route.source_queue.queue, "the source queue", None)
        dead_letter = _queue_reference(
            stack, route.source_queue.dead_letter_queue, "the dead-letter queue", source
        )
        book = route.address_book()
        name = None
        if book is not None:
            name = next((n for n, known in books.items() if known == book), str(len(books) + 1))
            books[name] = book
        members[source] = route.configuration(dead_letter, name)
    document: dict[str, object] = {FILE_DIRECTION: direction.value, FILE_ROUTES: members}
    if local_endpoints:
        document[FILE_LOCAL_ENDPOINTS] = sorted(set(local_endpoints))
    if books:
        document[FILE_ADDRESS_BOOKS] = books
    return json.dumps(document, sort_keys=True, separators=(",", ":"))


def _queue_reference(stack: Stack, queue: sqs.IQueue, what: str, source: str | None) -> str:
    """How the file names ``queue``: by its ARN when synth knows it (an imported queue), else
    by its name when it is a queue of the relay's own account and region (``RELAY_HOME``; a
    dead-letter queue named beside a ``source`` named so too), which CloudFormation alone
    would otherwise fill in."""
    arn = queue.queue_arn
    if not Token.is_unresolved(arn):
        return arn
    name = literal_queue_name(queue)
    queue_stack = Stack.of(queue)
    own = queue_stack is stack or (
        not Token.is_unresolved(stack.account)
        and not Token.is_unresolved(stack.region)
        and (queue_stack.account, queue_stack.region) == (stack.account, stack.region)
    )
    beside = source is None or not source.startswith("arn:")
    if name is not None and own and beside:
        return name
    raise ValueError(
        f"routes: {what} {queue.node.path} has no ARN known at synth and no name there in the "
        "relay's own account and region; the relay's configuration file is written at synth: "
        "create the queue with a queue_name in the relay's stack (EndpointQueue does), or "
        "import it with EndpointQueue.from_queue_arn and its ARNs as text"
    )
