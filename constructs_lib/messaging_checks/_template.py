"""What the checks read of one stack's synthesized template: its resources, the references
between them (``Ref`` and ``Fn::GetAtt`` within the stack), and values rendered as text where
synth knows them, so that a rule can tell whether a policy's ``aws:SourceArn`` names the topic a
subscription delivers from.

A value synth cannot know (an imported ARN passed as a token, ``Fn::ImportValue``, a
parameter, ``Fn::Sub``) renders as ``None``, and a comparison that hangs on one answers
``None`` too: the rules then report not applicable rather than guess.
"""

from __future__ import annotations

import fnmatch
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from constructs_lib.validation import AWS_MANAGED_KEY_ALIAS_PREFIX
from cross_account_runtime.nservicebus.queue_arn import FIFO_SUFFIX

QUEUE = "AWS::SQS::Queue"
TOPIC = "AWS::SNS::Topic"
SUBSCRIPTION = "AWS::SNS::Subscription"
KEY = "AWS::KMS::Key"
KEY_ALIAS = "AWS::KMS::Alias"
QUEUE_POLICY = "AWS::SQS::QueuePolicy"
QUEUE_INLINE_POLICY = "AWS::SQS::QueueInlinePolicy"
FUNCTION = "AWS::Lambda::Function"
FUNCTION_ALIAS = "AWS::Lambda::Alias"
FUNCTION_VERSION = "AWS::Lambda::Version"
EVENT_SOURCE_MAPPING = "AWS::Lambda::EventSourceMapping"

PARTITION = "${AWS.Partition}"
"""How a partition renders: a literal ``arn:aws:`` and ``{"Ref": "AWS::Partition"}`` must
compare equal, since CDK writes the one in an imported ARN and the other in an ARN it builds.
A value known only at deploy renders as ``${AWS.<name>}``, without the colons of its
CloudFormation name, so that an ARN holding one still splits into its six fields."""
_LITERAL_PARTITION = re.compile(r"^arn:aws(-[a-z]+)*:")
_PSEUDO = "${AWS."
SQS_MANAGED_KEY = AWS_MANAGED_KEY_ALIAS_PREFIX + "sqs"
"""The AWS-managed key of SQS: its key policy is AWS's, and admits no service principal but
SQS's own use, so SNS can never encrypt a message into a queue it protects."""


class KeyUse:
    """What encrypts a queue, as far as the template tells (:meth:`StackTemplate.queue_key`)."""

    NONE = "none"
    """No KMS key: SQS-managed encryption or none, which SNS needs no grant for."""
    AWS_MANAGED = "aws-managed"
    UNKNOWN = "unknown"
    """A key outside the stack (an imported ARN or alias): its policy cannot be read here."""


@dataclass(frozen=True)
class ArnParts:
    """An ARN rendered as text, split into its six fields."""

    partition: str
    service: str
    region: str
    account: str
    resource: str


def split_arn(text: str | None) -> ArnParts | None:
    """``text``'s fields if it reads as an ARN, else ``None``."""
    if text is None:
        return None
    parts = text.split(":", 5)
    if len(parts) != 6 or parts[0] != "arn":
        return None
    return ArnParts(*parts[1:])


def is_pseudo(text: str) -> bool:
    """Whether ``text`` holds a value known only at deploy (a region, an account, a partition)."""
    return _PSEUDO in text


def _field_matches(pattern: str, value: str, *, wildcards: bool) -> bool | None:
    if pattern == value:
        return True
    if wildcards and fnmatch.fnmatchcase(value, pattern.replace("[", "[[]")):
        return True
    if is_pseudo(pattern) or is_pseudo(value):
        return None
    return False


def text_matches(pattern: str, value: str, *, wildcards: bool) -> bool | None:
    """Whether a policy's ``pattern`` admits ``value`` (both rendered): ``True``, ``False``, or
    ``None`` when it hangs on a value known only at deploy.

    ARNs compare field by field, so that two ARNs differing in a literal field differ even when
    another field is a region or account still unknown. Two different resources of the stack
    never compare equal: CloudFormation names an unnamed one, which no literal can foresee."""
    if pattern == value or (wildcards and pattern == "*"):
        return True
    pattern_arn, value_arn = split_arn(pattern), split_arn(value)
    if pattern_arn is None or value_arn is None:
        return _field_matches(pattern, value, wildcards=wildcards)
    fields = [
        _field_matches(p, v, wildcards=wildcards)
        for p, v in zip(pattern.split(":", 5)[1:], value.split(":", 5)[1:], strict=True)
    ]
    if False in fields:
        return False
    return True if all(fields) else None


def truthy(value: object) -> bool:
    """A CloudFormation boolean, written as a bool or as text."""
    return value is True or (isinstance(value, str) and value.lower() == "true")


def json_property(value: object) -> Mapping[str, Any] | None:
    """A property CloudFormation takes as JSON, written as an object or as its text."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    return value if isinstance(value, Mapping) else None


@dataclass(frozen=True)
class StackTemplate:
    """One stack's template, with the stack's account and region where they are literal."""

    resources: Mapping[str, Mapping[str, Any]]
    account: str | None = None
    region: str | None = None

    @classmethod
    def of(
        cls, template: Mapping[str, Any], *, account: str | None, region: str | None
    ) -> StackTemplate:
        """The template as synth wrote it (``Resources`` and all)."""
        return cls(template.get("Resources", {}), account, region)

    def type_of(self, logical_id: str) -> str | None:
        resource = self.resources.get(logical_id)
        return resource.get("Type") if resource is not None else None

    def properties(self, logical_id: str) -> Mapping[str, Any]:
        resource = self.resources.get(logical_id, {})
        properties = resource.get("Properties", {})
        return properties if isinstance(properties, Mapping) else {}

    def of_type(self, kind: str) -> list[str]:
        """The logical ids of the stack's resources of type ``kind``."""
        return [lid for lid, resource in self.resources.items() if resource.get("Type") == kind]

    def target(self, value: object, *kinds: str) -> str | None:
        """The logical id of the resource of one of ``kinds`` that ``value`` refers to with a
        ``Ref`` or ``Fn::GetAtt``, or ``None`` (a literal, an import, another kind)."""
        logical_id: object = None
        if isinstance(value, Mapping) and len(value) == 1:
            if "Ref" in value:
                logical_id = value["Ref"]
            elif "Fn::GetAtt" in value:
                attribute = value["Fn::GetAtt"]
                if isinstance(attribute, str):
                    attribute = attribute.split(".", 1)
                if isinstance(attribute, list) and attribute:
                    logical_id = attribute[0]
        if isinstance(logical_id, str) and self.type_of(logical_id) in kinds:
            return logical_id
        return None

    def arn_of(self, logical_id: str) -> str:
        """The ARN of a queue or topic of the stack as text; where CloudFormation will name
        the resource, its name is a stand-in, ``${<logical id>.Name}``, which no literal name
        equals (none can foresee the generated one) but a wildcard may match."""
        kind = self.type_of(logical_id)
        name_property, service = ("QueueName", "sqs") if kind == QUEUE else ("TopicName", "sns")
        name = self.render(self.properties(logical_id).get(name_property))
        if name is None:
            name = "${" + logical_id + ".Name}"
        region = self.region or "${AWS.Region}"
        account = self.account or "${AWS.AccountId}"
        return f"arn:{PARTITION}:{service}:{region}:{account}:{name}"

    def render(self, value: object) -> str | None:
        """``value`` as text, where synth knows it (see the module's docstring)."""
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, int | float):
            return str(value)
        if isinstance(value, str):
            return _LITERAL_PARTITION.sub(f"arn:{PARTITION}:", value, count=1)
        if not isinstance(value, Mapping) or len(value) != 1:
            return None
        ((function, argument),) = value.items()
        if function == "Ref" and isinstance(argument, str):
            return self._render_ref(argument)
        if function == "Fn::GetAtt":
            logical_id = self.target(value, QUEUE, TOPIC)
            attribute = argument.split(".", 1)[-1] if isinstance(argument, str) else argument[-1]
            if logical_id is not None and attribute in ("Arn", "TopicArn"):
                return self.arn_of(logical_id)
            if isinstance(argument, list) and len(argument) == 2 and argument[0] in self.resources:
                return "${" + f"{argument[0]}.{argument[1]}" + "}"
            return None
        if function == "Fn::Join" and isinstance(argument, list) and len(argument) == 2:
            separator, parts = argument
            rendered = [self.render(part) for part in parts] if isinstance(parts, list) else [None]
            if not isinstance(separator, str) or None in rendered:
                return None
            return separator.join(part for part in rendered if part is not None)
        return None

    def _render_ref(self, name: str) -> str | None:
        if name == "AWS::Partition":
            return PARTITION
        if name == "AWS::Region":
            return self.region or "${AWS.Region}"
        if name == "AWS::AccountId":
            return self.account or "${AWS.AccountId}"
        if name.startswith("AWS::"):
            return "${AWS." + name.removeprefix("AWS::") + "}"
        if self.type_of(name) == TOPIC:
            return self.arn_of(name)
        if name in self.resources:
            return "${" + name + "}"
        return None

    def account_of(self, arn: str | None) -> str | None:
        """The account of an ARN rendered as text, where it is literal."""
        parts = split_arn(arn)
        return None if parts is None or is_pseudo(parts.account) else parts.account

    def is_fifo_topic(self, topic_arn: object) -> bool | None:
        """Whether the topic a subscription names is FIFO: a topic of the stack says so in
        ``FifoTopic``, another by its name (SNS requires the ``.fifo`` suffix)."""
        topic = self.target(topic_arn, TOPIC)
        if topic is not None:
            return truthy(self.properties(topic).get("FifoTopic"))
        return _fifo_by_name(self.render(topic_arn))

    def is_fifo_queue(self, queue_arn: object) -> bool | None:
        """Whether the queue an ARN names is FIFO (``FifoQueue`` of a queue of the stack, else
        the name's ``.fifo`` suffix, which SQS requires of FIFO queues)."""
        queue = self.target(queue_arn, QUEUE)
        if queue is not None:
            return truthy(self.properties(queue).get("FifoQueue"))
        return _fifo_by_name(self.render(queue_arn))

    def queue_policies(self, queue: str) -> list[object]:
        """The policy documents attached to a queue of the stack (``AWS::SQS::QueuePolicy``
        listing it, ``AWS::SQS::QueueInlinePolicy`` naming it)."""
        documents: list[object] = []
        for logical_id in self.of_type(QUEUE_POLICY):
            properties = self.properties(logical_id)
            queues = properties.get("Queues", [])
            if any(self.target(url, QUEUE) == queue for url in queues):
                documents.append(properties.get("PolicyDocument"))
        for logical_id in self.of_type(QUEUE_INLINE_POLICY):
            properties = self.properties(logical_id)
            if self.target(properties.get("Queue"), QUEUE) == queue:
                documents.append(properties.get("PolicyDocument"))
        return documents

    def queue_key(self, queue: str) -> str:
        """What encrypts a queue of the stack: a :class:`KeyUse`, or the logical id of the
        stack's ``AWS::KMS::Key`` (named by reference, or through an alias of the stack)."""
        value = self.properties(queue).get("KmsMasterKeyId")
        if value is None:
            return KeyUse.NONE
        key = self.target(value, KEY)
        if key is not None:
            return key
        alias = self.target(value, KEY_ALIAS)
        text = self.render(value)
        if alias is None and text is not None:
            if text == SQS_MANAGED_KEY or text.endswith(f":{SQS_MANAGED_KEY}"):
                return KeyUse.AWS_MANAGED
            alias = next(
                (
                    candidate
                    for candidate in self.of_type(KEY_ALIAS)
                    if self.properties(candidate).get("AliasName") == text
                ),
                None,
            )
        if alias is not None:
            key = self.target(self.properties(alias).get("TargetKeyId"), KEY)
            if key is not None:
                return key
        return KeyUse.UNKNOWN

    def key_policy(self, key: str) -> object:
        return self.properties(key).get("KeyPolicy")

    def function_of(self, value: object) -> str | None:
        """The ``AWS::Lambda::Function`` of the stack a function name or ARN refers to,
        directly or through a version or an alias of the stack."""
        function = self.target(value, FUNCTION)
        if function is not None:
            return function
        indirect = self.target(value, FUNCTION_ALIAS, FUNCTION_VERSION)
        if indirect is None:
            return None
        return self.function_of(self.properties(indirect).get("FunctionName"))

    def lambda_sources(self) -> set[str]:
        """The queues of the stack a Lambda event source mapping of the stack reads."""
        sources = (
            self.target(self.properties(mapping).get("EventSourceArn"), QUEUE)
            for mapping in self.of_type(EVENT_SOURCE_MAPPING)
        )
        return {queue for queue in sources if queue is not None}


def _fifo_by_name(arn: str | None) -> bool | None:
    parts = split_arn(arn)
    if parts is None or is_pseudo(parts.resource) or "${" in parts.resource:
        return None
    return parts.resource.endswith(FIFO_SUFFIX)
