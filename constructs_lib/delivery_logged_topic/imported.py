"""The topics that exist already, behind :class:`IDeliveryLoggedTopic`: a topic imported by its
ARN (:meth:`DeliveryLoggedTopic.from_topic_arn`) and an aws-cdk-lib topic
(:meth:`DeliveryLoggedTopic.from_topic`), whose owner keeps its policies and its delivery
logging."""

from __future__ import annotations

from aws_cdk import Stack, Token
from aws_cdk import aws_kms as kms
from aws_cdk import aws_sns as sns
from constructs import Construct

from constructs_lib._private.cdk_types import literal_topic_name, same_key
from constructs_lib._private.subscriptions import allow_sns_for_topic
from constructs_lib.delivery_logged_topic.topic_base import _TopicBase
from constructs_lib.validation import require_customer_managed_key, require_topic_arn
from cross_account_runtime.nservicebus.queue_arn import FIFO_SUFFIX


class _ImportedTopic(_TopicBase):
    """An existing topic behind the :class:`IDeliveryLoggedTopic` protocol."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        topic_arn: str,
        encryption_key_arn: str | None,
    ) -> None:
        super().__init__(scope, construct_id)
        if Token.is_unresolved(topic_arn):
            raise ValueError(
                "topic_arn: give the topic's ARN as a string; a token cannot say the topic's "
                "name or whether it is FIFO"
            )
        self.topic_name = require_topic_arn("topic_arn", topic_arn).split(":")[5]
        self.fifo = self.topic_name.endswith(FIFO_SUFFIX)
        self.topic = sns.Topic.from_topic_arn(self, "Topic", topic_arn)
        self.encryption_key: kms.IKey | None = (
            kms.Key.from_key_arn(self, "Key", encryption_key_arn) if encryption_key_arn else None
        )


class _ExistingTopic(_TopicBase):
    """An aws-cdk-lib topic behind the :class:`IDeliveryLoggedTopic` protocol (see
    :meth:`DeliveryLoggedTopic.from_topic`)."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        topic: sns.ITopic,
        encryption_key: kms.IKey | None,
    ) -> None:
        super().__init__(scope, construct_id)
        require_customer_managed_key(
            "topic",
            topic.master_key,
            fix="encrypt the topic with a customer-managed key (master_key=aws_kms.Key(...))",
        )
        require_customer_managed_key("encryption_key", encryption_key)
        if (
            encryption_key is not None
            and topic.master_key is not None
            and not same_key(encryption_key, topic.master_key)
        ):
            raise ValueError(
                f"encryption_key: {topic.node.path} is encrypted with "
                f"{topic.master_key.node.path} already; leave encryption_key out to use it"
            )
        name = literal_topic_name(topic)
        if name is None:
            raise ValueError(
                f"topic: {topic.node.path} has no name known at synth (CloudFormation names "
                "it), and its subscriptions' dead-letter queues are named after it; create it "
                "with topic_name=..., or import it by its ARN as text"
            )
        self.topic = topic
        self.topic_name = name
        self.fifo = topic.fifo
        self.encryption_key = encryption_key or topic.master_key
        # The topic's ARN computed from its name: the key the topic is encrypted with cannot
        # name it by reference (each would depend on the other).
        arn = (
            Stack.of(topic).format_arn(service="sns", resource=name)
            if isinstance(topic.node.default_child, sns.CfnTopic)
            else topic.topic_arn
        )
        allow_sns_for_topic(self.encryption_key, arn)
