"""References between stacks of different accounts, refused where a construct's keywords would
make one.

A construct given a resource of another stack (a queue, a key, a topic, or a token of one: its
ARN, its name) refers to it in its own template. Within one account CloudFormation resolves
that with an export; between accounts aws-cdk-lib writes a cross-account stack output
(``Fn::GetStackOutput`` through a role of the other account) or fails at synth with
``CannotUseCrossEnvironment``: either way the two accounts' deployments are tied together,
which the constructs never want (each account deploys its own stack, and nothing crosses
between them but names both sides compute). So every keyword is checked, after the construct
has read it, for a resource or a token of a stack of another account, and refused naming the
keyword and the fix: the ARN as text, imported in this stack.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from typing import Any

from aws_cdk import Reference, Stack, Token, Tokenization
from constructs import IConstruct

_STRING_TOKEN = "${Token["
"""What every string token of aws-cdk-lib holds: a cheap test before asking jsii."""
_LIST_TOKEN = "#{Token["


def stack_of(construct: IConstruct) -> Stack | None:
    """The stack a construct lives in, or ``None`` for one in no stack (an ``App``)."""
    try:
        return Stack.of(construct)
    except RuntimeError:
        return None


def foreign_stack_problem(keyword: str, value: object, here: Stack) -> str | None:
    """Why ``value`` (given as ``keyword`` to a construct in ``here``) would make a reference
    to a stack of another account, or ``None``: a construct, or a token of one, in a stack
    whose account differs from ``here``'s, both known at synth."""
    own = here.account
    if Token.is_unresolved(own):
        return None
    for construct in _constructs_in(value):
        stack = stack_of(construct)
        if stack is None or stack is here or Token.is_unresolved(stack.account):
            continue
        if stack.account != own:
            return (
                f"{keyword}: {construct.node.path} belongs to the stack {stack.stack_name} of "
                f"account {stack.account}, and this construct to {here.stack_name} of account "
                f"{own}: a reference between stacks of different accounts is no CloudFormation "
                "export but a cross-account stack output (Fn::GetStackOutput) that ties the "
                "two deployments together; pass its ARN as text and import it in this stack "
                "(EndpointQueue.from_queue_arn, DeliveryLoggedTopic.from_topic_arn, "
                "aws_sqs.Queue.from_queue_arn, aws_kms.Key.from_key_arn, ...)"
            )
    return None


def _constructs_in(value: object, depth: int = 0) -> Iterator[IConstruct]:
    """The constructs ``value`` holds: itself, the targets of its tokens, those of the items
    of a list or a mapping, and of the fields of a dataclass (a route, an ingress)."""
    if depth > 4:  # a keyword's value nests a list of dataclasses of lists at most
        return
    if isinstance(value, str):
        if _STRING_TOKEN in value or _LIST_TOKEN in value:
            yield from _token_targets(value)
        return
    if isinstance(value, Mapping):
        items: Any = value.values()
    elif isinstance(value, list | tuple | set | frozenset):
        items = value
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        items = [getattr(value, field.name) for field in dataclasses.fields(value)]
    else:
        # A construct of this app or imported (jsii gives an imported one as a proxy of its
        # interface, which only its node tells from any other object).
        if getattr(value, "node", None) is not None:
            yield value  # type: ignore[misc]
        return
    for item in items:
        yield from _constructs_in(item, depth + 1)


def _token_targets(text: str) -> Iterator[IConstruct]:
    """The constructs the references in a string token point to."""
    for token in Tokenization.reverse_string(text).tokens:
        if isinstance(token, Reference):
            yield token.target
