"""The SQS relay's configuration format: a JSON file in the function's code and a few
environment variables, their names and their values: what the CDK construct writes and the
relay reads (:mod:`cross_account_runtime.relay.config`; each route,
:mod:`cross_account_runtime.relay.routes`).

The topology decides which queues a relay reads, where each one forwards to, and which local
endpoints' addresses it stamps. That can be far more than Lambda's 4 KB of environment (an
inbound relay to the error queue of a ring of ten accounts of fifty endpoints lists 501 queues),
so the CDK construct writes it into a file of the function's code asset, read once per container
at the first invocation. The environment keeps only what names the file and what
CloudFormation fills in at deploy time, which a file written at synth cannot hold:

``RELAY_CONFIGURATION`` (required)
    The file's path, relative to the function's code (``LAMBDA_TASK_ROOT``, which Lambda sets;
    the working directory where it is unset), e.g. ``relay-config.json``.
``RELAY_HOME`` (required when the file names a source queue by name)
    The relay's own account and region, ``arn:<partition>:sqs:<region>:<account>``: a source
    queue the file names without an ARN is the queue of that name there.
``RELAY_BODY_BUCKET`` (outbound, for routes with a ``bodyBucket``; inbound: must be unset)
    The relay's own account's body bucket, where the senders' transports put large bodies.
``POWERTOOLS_SERVICE_NAME`` (optional)
    Names the log lines' ``service``; unset, it is :data:`DEFAULT_SERVICE_NAME`.

The file is a JSON object with these members:

``direction`` (required)
    ``outbound``: the relay reads shadow queues in the sender's account and stamps the ARN
    header; ``inbound``: it reads ingress queues in the receiver's account and substitutes the
    headers named in the ARN header.
``routes`` (required)
    A JSON object, one member per queue the relay reads, keyed by its ARN or by its name (a
    queue of ``RELAY_HOME``)::

        {"Billing": {"destination": "arn:aws:sqs:us-east-1:222222222222:Billing-ingress",
                     "deadLetterQueue": "Billing-dlq"}}

    ``destination`` (an ARN) is where its messages go; ``deadLetterQueue`` is the queue's own
    redrive dead-letter queue (its ARN, or its name beside the source queue), to which the relay
    sends the messages it refuses (see :mod:`cross_account_runtime.relay.core`). Optional
    members:

    ``"delayed": true`` (outbound)
        The source is the shadow of a delay queue (FIFO, ``<queue>-delay.fifo``): the relay
        forwards each message only when its ``NServiceBus.AmazonSQS.DelaySeconds`` are nearly
        spent, as NServiceBus's delayed messages pump does, and sends it back to the source
        until then.
    ``"receiver": "arn"`` or ``"name"`` (inbound, required there)
        How the destination endpoint reads addresses: ``arn`` for an ARN-aware endpoint, which
        substitutes the ARN header itself (the message is delivered unchanged); ``name`` for a
        released one, which resolves every address by name in its own account: the relay
        writes into each address header the address that leads to the same queue from there.
    ``"addressBook": "<book>"`` (with ``"receiver": "name"``)
        The book of ``addressBooks`` listing the queues that endpoint reaches by name.
    ``"form": "wrapped"`` or ``"attribute"`` (inbound, required there; refused outbound)
        The wire form the receiving endpoint's own dispatcher writes (``attribute`` for an
        endpoint configured with ``DoNotWrapOutgoingMessages``): the inbound relay delivers
        every NServiceBus message in that form, since a receiver that copies attributes onto
        its retries and error copies mishandles a message of the other form.
    ``"forwardUnreadable": true`` (both directions)
        The route leads to an error queue: a message the relay cannot read (unreadable
        NServiceBus headers, a malformed ARN header) is forwarded unchanged instead of
        dead-lettered, as the transport moves a message it cannot read to its error queue.
    ``"maxReceiveCount": <1-1000>`` (both directions)
        The source queue's redrive ``maxReceiveCount``, so that the relay knows a receive is the
        last before SQS moves the message to the dead-letter queue, and dead-letters a message
        whose send fails then itself, with the reason.
    ``"bodyBucket": "<bucket name>"``
        Outbound (with ``RELAY_BODY_BUCKET``): the receiving account's body bucket. A message
        whose body the transport put in S3 (``S3BodyKey``) is forwarded only once the body is
        copied there under the same key, since the receiver reads the key from its own bucket;
        a body that no longer fits inline once stamped is uploaded there. Inbound: the relay's
        own account's body bucket, into which it uploads a body that no longer fits inline
        after form conversion or address translation (see
        :mod:`cross_account_runtime.relay.bodies`).
``localEndpoints`` (outbound: required; inbound: must be absent)
    A JSON array of the transport addresses of the local queues (endpoint queues and the error
    queue) whose address a message may carry, e.g. ``["Sales", "Shipping"]``: their physical
    names, which NServiceBus's address headers carry. Each is a queue of the source queues'
    account and region, so its ARN follows from the name.
``addressBooks`` (inbound, for routes with an ``addressBook``; outbound: must be absent)
    A JSON object of books, each listing the queues a released endpoint reaches by name in its
    own account (its account's queues, and those a shadow queue there leads to), grouped by
    account and region::

        {"1": {"arn:aws:sqs:us-east-1:111111111111": ["Sales", "Shipping"],
               "arn:aws:sqs:us-east-1:333333333333": ["error"]}}

    A released endpoint's transport address is its queue's name, so the address that leads to
    a listed queue is its name. Books rather than a map per route: the endpoints of one
    account reach the same queues, and a book is written once.

Everything is checked once, at the first invocation of a container, and every problem is
reported as a :class:`~cross_account_runtime.common.configuration.ConfigurationError` naming
the file, the member or variable, and the fix: a relay that guessed would forward messages to
the wrong account.
"""

from __future__ import annotations

import enum

# A local flag rather than ``typing.TYPE_CHECKING``: importing ``typing`` costs more than this
# whole module; mypy and ruff treat the name the same way.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

ENV_CONFIGURATION: Final = "RELAY_CONFIGURATION"
ENV_HOME: Final = "RELAY_HOME"
ENV_BODY_BUCKET: Final = "RELAY_BODY_BUCKET"
ENV_TASK_ROOT: Final = "LAMBDA_TASK_ROOT"
"""Where Lambda unpacked the function's code (``/var/task``); a relative
``RELAY_CONFIGURATION`` is read from there."""

FILE_DIRECTION: Final = "direction"
FILE_ROUTES: Final = "routes"
FILE_LOCAL_ENDPOINTS: Final = "localEndpoints"
FILE_ADDRESS_BOOKS: Final = "addressBooks"
FILE_MEMBERS: Final = (FILE_DIRECTION, FILE_ROUTES, FILE_LOCAL_ENDPOINTS, FILE_ADDRESS_BOOKS)

HANDLER: Final = "cross_account_runtime.relay.lambda_handler.handler"
"""The relay function's handler, as the construct sets it and the cost report finds relays."""

DEFAULT_SERVICE_NAME: Final = "sqs-relay"
"""The log lines' ``service`` when ``POWERTOOLS_SERVICE_NAME`` is unset. The CDK construct sets
it per function (its role's name), since the service is also the metrics' dimension, by which
alarms tell relays apart."""

ROUTE_DESTINATION: Final = "destination"
ROUTE_DEAD_LETTER_QUEUE: Final = "deadLetterQueue"
ROUTE_DELAYED: Final = "delayed"
ROUTE_RECEIVER: Final = "receiver"
ROUTE_ADDRESS_BOOK: Final = "addressBook"
ROUTE_BODY_BUCKET: Final = "bodyBucket"
ROUTE_FORM: Final = "form"
ROUTE_FORWARD_UNREADABLE: Final = "forwardUnreadable"
ROUTE_MAX_RECEIVE_COUNT: Final = "maxReceiveCount"

# What the error messages show as the way to write a member or variable.
ROUTES_EXAMPLE: Final = (
    '{"<source queue name or ARN>": {"destination": "<destination queue ARN>", '
    '"deadLetterQueue": "<the source queue\'s dead-letter queue name or ARN>"}}'
)
LOCAL_ENDPOINTS_EXAMPLE: Final = '["Sales", "Shipping"]'
ADDRESS_BOOKS_EXAMPLE: Final = '{"1": {"arn:aws:sqs:us-east-1:111111111111": ["Sales"]}}'
HOME_EXAMPLE: Final = "arn:aws:sqs:us-east-1:111111111111"


class RelayDirection(enum.StrEnum):
    """Which side of the account boundary a relay works on (``RELAY_DIRECTION``).

    A ``StrEnum``, so the environment variable, the log lines and a dead-lettered message's
    ``Relay.Rejection`` JSON carry the plain text (``outbound``, ``inbound``).
    """

    OUTBOUND = "outbound"
    """Reads shadow queues in the sender's account and stamps the ARN header."""
    INBOUND = "inbound"
    """Reads ingress queues in the receiver's account and substitutes the headers the ARN
    header names."""


class ReceiverAddressing(enum.StrEnum):
    """How the endpoint an inbound relay delivers to reads address headers (``receiver``)."""

    ARN = "arn"
    """ARN-aware (seed 000's "New"): it substitutes the headers the ARN header names itself."""
    NAME = "name"
    """A released transport: it resolves every address by name in its own account."""


class MessageForm(enum.StrEnum):
    """The wire form an inbound route delivers NServiceBus messages in (``form``): the one the
    receiving endpoint's own dispatcher writes."""

    WRAPPED = "wrapped"
    """The transport's default: headers and base64 body in a JSON envelope in the body."""
    ATTRIBUTE = "attribute"
    """``DoNotWrapOutgoingMessages``: the payload as the body, the headers in the
    ``NServiceBus.AmazonSQS.Headers`` attribute."""
