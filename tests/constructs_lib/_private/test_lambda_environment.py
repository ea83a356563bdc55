"""The environment a function takes once deployed, counted at synth."""

from __future__ import annotations

from aws_cdk import App, Stack
from aws_cdk import aws_sqs as sqs

from constructs_lib._private.lambda_environment import LONGEST_QUEUE_ARN, environment_size


def test_plain_variables_count_their_keys_values_and_json_punctuation() -> None:
    assert environment_size({"RELAY_DIRECTION": "inbound"}) == len('"RELAY_DIRECTION":"inbound",')


def test_a_value_cloudformation_resolves_counts_as_the_longest_queue_arn() -> None:
    queue = sqs.Queue(Stack(App(), "S"), "Q")
    value = f'{{"{queue.queue_arn}":"{queue.queue_arn}"}}'
    assert environment_size({"V": value}) == (
        len('"V":"",') + len('{"":""}') + 2 * LONGEST_QUEUE_ARN
    )


def test_the_longest_queue_arn_bounds_every_real_one() -> None:
    longest = "arn:aws-iso-f:sqs:us-isof-south-1:123456789012:" + "q" * 80
    assert len(longest) <= LONGEST_QUEUE_ARN
