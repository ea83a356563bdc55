"""``MessagingKey``: one KMS key for every queue of an account, instead of one per queue.

A key costs $1 a month: an organization of 500 endpoints, with their shadows and ingress
queues, pays for about a thousand keys a month when every queue group has its own. One key
per account (and region) costs one, and admits no grantee beyond what the per-queue keys did:
each queue's grants are written for that queue alone (``kms:EncryptionContext:aws:sqs:arn``),
and queues whose grantees are alike share a statement, so the policy grows with the kinds of
grantee, not with the queues (:mod:`constructs_lib._private.grants`).

The key carries one alias, ``alias/messaging/queues``, not one per queue: KMS allows 50 aliases
per key (adjustable), fewer than the queues one account's relays deliver to (200 endpoints
in one account have 400), and every alias of one key would name the same key. The relays are
granted a destination's key by the queues they send to (the encryption context), which holds
whichever key encrypts them.
"""

from __future__ import annotations

from aws_cdk import RemovalPolicy
from aws_cdk import aws_kms as kms
from constructs import Construct

from constructs_lib._private.attributes import Attribute
from constructs_lib._private.keywords import checked
from constructs_lib.defaults import QUEUE_KEY_ALIAS


@checked
class MessagingKey(Construct):
    """The key (``key``) every queue of an account is encrypted with, rotation on; give it to
    each :class:`~constructs_lib.EndpointQueue` of the account (``shared_key``).

    Example:

    ```python
    from aws_cdk import App, Stack

    from constructs_lib import EndpointQueue, MessagingKey

    app = App()
    stack = Stack(app, "Sales")
    key = MessagingKey(stack, "QueueKey")
    EndpointQueue(stack, "Sales", endpoint_name="Sales", shared_key=key)
    EndpointQueue(stack, "Shipping", endpoint_name="Shipping", shared_key=key)
    app.synth()
    ```
    """

    key = Attribute[kms.Key]("The account's shared queue key (alias ``alias/messaging/queues``).")

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        alias_name: str = QUEUE_KEY_ALIAS,
        removal_policy: RemovalPolicy = RemovalPolicy.RETAIN,
    ) -> None:
        """Create the key and its alias.

        :param alias_name: the key's alias. Default:
            :data:`~constructs_lib.defaults.QUEUE_KEY_ALIAS` (``alias/messaging/queues``).
        :param removal_policy: of the key; messages still queued cannot be read without it.
            Default: ``RemovalPolicy.RETAIN``.
        """
        super().__init__(scope, construct_id)
        self.key = kms.Key(
            self,
            "Key",
            description="Encrypts every messaging queue of this account; each grant is for the "
            "queues its grantee writes to",
            enable_key_rotation=True,
            alias=alias_name,
            removal_policy=removal_policy,
        )
