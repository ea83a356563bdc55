"""SNS subscriptions from CloudFormation, and SNS deliveries into the queue's own account.

In AWS a subscription belongs to its topic, in the topic's account and region, whoever creates
it: the stacks' ``CrossAccountQueueSubscription`` has the queue's owner subscribe its queue to a
topic of another account (the topic's policy allows it). SNS then delivers to the queue its
ARN names, in that queue's account and region; an SQS (or Lambda) subscription is confirmed at
once, an HTTP(S) or email one only once its endpoint confirms the request SNS sends it.

moto lacks or oversteps three parts of that:

- its CloudFormation has no model for ``AWS::SNS::Subscription`` (``resource_class_from_type``
  in ``moto/cloudformation/parsing.py`` logs "No Moto CloudFormation support" and skips it), so
  a stack's subscriptions do not exist and a publish reaches no subscriber;
- its SNS sends an SQS delivery to ``sqs_backends[subscription.account_id][<region of the
  queue ARN>]`` (``Subscription.publish`` in ``moto/sns/models.py``): the account of the SNS
  backend that made the subscription, which for a subscription held by its topic is the topic's
  account, not the queue's; a queue of the same name there would silently get the message;
- it delivers to every subscription, confirmed or not, and makes an HTTP(S) delivery a real
  ``requests.post`` to the endpoint, which the local AWS must never do.

(Its Lambda deliveries, which run the function in Docker, are
:mod:`local_aws.moto.sns_lambda_deliveries`' to replace.)

:class:`SubscriptionResource` creates a stack's subscription through moto's SNS backend of the
topic's account and region (from ``TopicArn``), with the template's attributes, the stack's
account as its owner, and HTTP(S) and email ones pending confirmation: they receive nothing
until their endpoint confirms, as in AWS (:mod:`local_aws.moto.sns_http_deliveries` sends the
confirmation request to an HTTP(S) endpoint whose host is mapped to a loopback stand-in, and
makes the deliveries; nothing else is sent anywhere). :func:`register` makes moto deliver an
SQS message to the account in the queue ARN (a queue missing there fails the publish, as moto
does for any missing queue) and withhold deliveries from a subscription pending confirmation. The model registers itself by subclassing when this module is
imported; ``python -m local_aws.moto.main`` imports it and calls :func:`register` before
starting moto's server.
"""

from __future__ import annotations

import json
from typing import Any

from moto.cloudformation.exceptions import ValidationError
from moto.core.common_models import CloudFormationModel
from moto.core.utils import ensure_boolean
from moto.sns.models import Subscription, sns_backends
from moto.utilities.arns import parse_arn

from local_aws.moto.patching import replacing
from local_aws.moto.resource_model import ReplacedOnUpdate, ResourceModel

CONFIRMED_BY_ENDPOINT = frozenset({"http", "https", "email", "email-json"})
"""Protocols whose endpoint must confirm a subscription before SNS delivers to it."""

_ATTRIBUTES = (
    # The scope first: moto validates a filter policy against the scope already set.
    "FilterPolicyScope",
    "FilterPolicy",
    "RawMessageDelivery",
    "RedrivePolicy",
    "DeliveryPolicy",
    "SubscriptionRoleArn",
)
"""Template properties that become subscription attributes, in the order they are set."""

_PROPERTIES = frozenset({"TopicArn", "Protocol", "Endpoint", "Region", *_ATTRIBUTES})
"""Every property the model applies; ``Region`` is the topic's, which ``TopicArn`` names."""

_PATCHED = "_local_aws_sns_delivery"
_CREATED_IN = "_local_aws_created_in"


def _attribute_value(name: str, value: Any) -> Any:
    """A template property as moto's SNS API hands it to the backend: a boolean for raw
    delivery, JSON text for the policies (a template may give them as objects)."""
    if name == "RawMessageDelivery":
        return ensure_boolean(value)
    if name in ("FilterPolicy", "RedrivePolicy", "DeliveryPolicy") and not isinstance(value, str):
        return json.dumps(value)
    return value


class SubscriptionResource(ReplacedOnUpdate, ResourceModel, CloudFormationModel):
    """``AWS::SNS::Subscription`` created on its topic, in the topic's account and region.

    ``Ref`` and ``Fn::GetAtt Arn`` give the subscription's ARN. An update replaces the
    subscription (a new ARN; AWS keeps it when only attributes change), stack deletion
    unsubscribes it.
    """

    TYPE = "AWS::SNS::Subscription"
    ATTRIBUTES = frozenset({"Arn"})

    @classmethod
    def create_from_cloudformation_json(
        cls,
        resource_name: str,
        cloudformation_json: dict[str, Any],
        account_id: str,
        region_name: str,  # noqa: ARG003 (the stack's; the topic's comes from TopicArn)
        **_: Any,
    ) -> SubscriptionResource:
        properties = cloudformation_json.get("Properties", {})
        unknown = sorted(set(properties) - _PROPERTIES)
        if unknown:
            raise ValidationError(
                message=f"{resource_name}: the local AWS does not model the subscription "
                f"properties {unknown}"
            )
        topic_arn = properties["TopicArn"]
        topic = parse_arn(topic_arn)
        backend = sns_backends[topic.account][topic.region]
        protocol = properties["Protocol"]
        subscription = backend.subscribe(topic_arn, properties["Endpoint"], protocol)
        # An endpoint may have confirmed it already (the confirmation request goes out as the
        # subscription is made, where the local AWS can reach the endpoint).
        pending = protocol in CONFIRMED_BY_ENDPOINT and not subscription.confirmed
        subscription.owner = account_id
        subscription.attributes.update(
            Owner=account_id,
            PendingConfirmation=pending,
            ConfirmationWasAuthenticated=not pending,
        )
        for name in _ATTRIBUTES:
            if name in properties:
                backend.set_subscription_attributes(
                    subscription.arn, name, _attribute_value(name, properties[name])
                )
        return cls(subscription.arn, {"Arn": subscription.arn})

    def delete(self, *_: str) -> None:
        """Unsubscribe, in the topic's account and region (the ARN's, not the stack's
        account and region moto passes).

        moto's stack deletion calls this first; the template properties it would otherwise
        pass to ``delete_from_cloudformation_json`` are unresolved.
        """
        arn = parse_arn(self.physical_resource_id)
        sns_backends[arn.account][arn.region].unsubscribe(self.physical_resource_id)


def register() -> None:
    """Make moto's SNS deliver to an SQS queue in the account its ARN names, and deliver
    nothing to a subscription pending confirmation. Idempotent.

    moto's ``Subscription.publish`` reads the account of an SQS delivery from the
    subscription's ``account_id``; for an SQS subscription that now answers the queue ARN's
    account (the region already comes from the ARN), for any other the account it was made in.
    (moto also writes that account into the envelope's made-up ``UnsubscribeURL``.)
    ``publish`` and ``publish_batch`` both deliver through ``Subscription.publish``.
    """
    original = Subscription.publish

    @replacing(Subscription, "publish", _PATCHED)
    def publish(self: Subscription, *args: Any, **kwargs: Any) -> None:
        if self.attributes.get("PendingConfirmation"):
            return
        original(self, *args, **kwargs)

    def delivery_account(self: Subscription) -> str:
        account: str = (
            parse_arn(self.endpoint).account
            if self.protocol == "sqs"
            else self.__dict__[_CREATED_IN]
        )
        return account

    def created_in(self: Subscription, account_id: str) -> None:
        self.__dict__[_CREATED_IN] = account_id

    setattr(Subscription, "account_id", property(delivery_account, created_in))  # noqa: B010
