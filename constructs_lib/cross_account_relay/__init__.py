"""``CrossAccountRelay``: the Lambda relay of the account bridge (:mod:`cross_account_runtime.relay`).

An outbound relay reads shadow queues in the sender's account and forwards to ingress queues
in other accounts, stamping the ARN header on the address headers (and holds the messages of a
delay queue's shadow until they are nearly due); an inbound relay reads ingress queues and
delivers to the local endpoint queues in the wire form each endpoint's dispatcher writes, with
the addresses unchanged for an ARN-aware endpoint and translated for a released one. Its role
may receive only from its own queues, send only to the declared destinations, its delay queues'
shadows and their own dead-letter queues, use a key only for those queues' encryption (whichever
key encrypts them), and put bodies only into the routes' body buckets. Its function's timeout follows
the batch size (:class:`~constructs_lib.relay_timing.RelayTiming`).

The routes, the local endpoints and the address books are written at synth into a file of the
function's code asset (:data:`.configuration_file.CONFIGURATION_FILE`), which the relay reads once per container:
Lambda's 4 KB of environment would hold about eight routes, or one address book of some 300
queues. So one function reads all of the relay's queues however many the account has, and only
what CloudFormation fills in stays in the environment: the account and region the file's queue
names belong to (``RELAY_HOME``) and the own body bucket (``RELAY_BODY_BUCKET``). Everything the
file holds must therefore be known at synth; a token there is refused, naming the keyword.

Split as aws-cdk-lib splits a construct: :mod:`.relay_route` (one route), :mod:`.relay` (the
construct), :mod:`.relay_grants` (what its role may do), :mod:`.configuration_file` (what its
function reads) and :mod:`.validate_keywords` (the checks of its keywords and routes).
"""

from constructs_lib.cross_account_relay.relay import CrossAccountRelay
from constructs_lib.cross_account_relay.relay_route import RelayRoute
from cross_account_runtime.relay.config_format import (
    MessageForm,
    ReceiverAddressing,
    RelayDirection,
)
from cross_account_runtime.relay.outcomes import RelayMetric

__all__ = [
    "CrossAccountRelay",
    "MessageForm",
    "ReceiverAddressing",
    "RelayDirection",
    "RelayMetric",
    "RelayRoute",
]
