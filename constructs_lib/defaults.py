"""Every default of the constructs, once, beside its reason (as AWS Solutions Constructs keep
theirs in ``sqs-defaults.ts``), and the service bounds the props are checked against.

The constructs take these as their keyword defaults and the topology (``stacks/topology``)
imports them, so changing a default here changes it for a construct used directly and for
every stack the topology builds alike.
"""

from __future__ import annotations

from aws_cdk import Duration, Size
from aws_cdk import aws_logs as logs

from constructs_lib.validation import range_problem
from cross_account_runtime.nservicebus.redrive import MAX_RECEIVE_COUNT_RANGE
from cross_account_runtime.sns_endpoint.config import DEFAULT_REPLAY_WINDOW_SECONDS

# Endpoint queues ---------------------------------------------------------------------------

IMMEDIATE_RETRIES = 5
"""NServiceBus's default immediate retries (``Recoverability().Immediate``): the released SQS
transport retries by making the message visible again, so each retry is another receive and an
endpoint needs ``IMMEDIATE_RETRIES + 1`` receives before it hands a failing message to its
delayed retries (a new message) or its error queue."""
RECEIVE_MARGIN = 4
"""Receives allowed beyond what an endpoint's immediate retries need before SQS redrives the
message to the dead-letter queue: an endpoint that crashes or is scaled in mid-processing
spends a receive without retrying. A message that always fails so reaches the error queue (and
ServiceControl) first; the dead-letter queue stays the backstop for what an endpoint cannot
even receive."""


def default_max_receive_count(immediate_retries: int) -> int:
    """Receives before SQS moves a message to the dead-letter queue of an endpoint with
    ``immediate_retries``: the receives its retries need and :data:`RECEIVE_MARGIN`."""
    return immediate_retries + 1 + RECEIVE_MARGIN


def max_receive_count_problem(max_receive_count: int, immediate_retries: int) -> str | None:
    """Why ``max_receive_count`` cannot serve an endpoint with ``immediate_retries``, or None:
    each immediate retry is another receive (:data:`IMMEDIATE_RETRIES`), so fewer than
    ``immediate_retries + 1`` receives let SQS take a failing message away from NServiceBus."""
    needed = immediate_retries + 1
    if max_receive_count >= needed:
        return None
    return (
        f"{max_receive_count} receives end before the endpoint's {immediate_retries} immediate "
        f"retries do ({needed} receives): SQS would move a failing message to the dead-letter "
        "queue, and NServiceBus would never send it to its error queue; allow at least "
        f"{needed} receives (the default is {default_max_receive_count(immediate_retries)}) "
        "or fewer immediate retries"
    )


def endpoint_receives(
    immediate_retries: int,
    max_receive_count: int | None,
    *,
    fields: tuple[str, str] = ("immediate_retries", "max_receive_count"),
) -> tuple[int, int, list[tuple[str, str]]]:
    """The one check of an endpoint queue's receives, for an :class:`~constructs_lib.EndpointQueue`
    and a topology's endpoint alike: the immediate retries leave at least one receive within
    SQS's range (:data:`~cross_account_runtime.nservicebus.redrive.MAX_RECEIVE_COUNT_RANGE`);
    ``max_receive_count`` (``None``: :func:`default_max_receive_count`) is within that range and
    lets every immediate retry happen (:func:`max_receive_count_problem`).

    Returns the immediate retries and the ``maxReceiveCount``, each its default where it was
    refused, and the ``(field, problem)`` of each refusal in the order checked, ``fields``
    naming the two values."""
    retries_field, receives_field = fields
    low, high = MAX_RECEIVE_COUNT_RANGE
    problems: list[tuple[str, str]] = []
    retries_problem = range_problem(immediate_retries, 0, high - 1)
    if retries_problem is not None:
        problems.append((retries_field, retries_problem))
        immediate_retries = IMMEDIATE_RETRIES
    default = default_max_receive_count(immediate_retries)
    if max_receive_count is None and default > high:
        # The default is derived from the retries, so the retries are what was given.
        problems.append(
            (
                retries_field,
                f"{immediate_retries} immediate retries need {immediate_retries + 1} receives "
                f"and the default {receives_field} adds {RECEIVE_MARGIN} more ({default}), over "
                f"SQS's {high}; give {receives_field} (at most {high}) or fewer immediate "
                "retries",
            )
        )
        return immediate_retries, high, problems
    if max_receive_count is None:
        max_receive_count = default
    receives_problem = range_problem(max_receive_count, low, high)
    if receives_problem is not None:
        problems.append((receives_field, receives_problem))
        max_receive_count = default
    floor_problem = max_receive_count_problem(max_receive_count, immediate_retries)
    if floor_problem is not None:
        problems.append((receives_field, floor_problem))
    return immediate_retries, max_receive_count, problems


MAX_RECEIVE_COUNT = default_max_receive_count(IMMEDIATE_RETRIES)
"""Receives before SQS moves a message to the endpoint queue's dead-letter queue, with
NServiceBus's default immediate retries."""
DELAY_QUEUE_DELAY = Duration.seconds(900)
"""The delivery delay of an endpoint's ``<queue>-delay.fifo``: the released transport sends
delays over 15 minutes there and refuses to start unless the queue delays every message at
least 900 s (``DelayedMessagesPump.Initialize``)."""
DELAY_QUEUE_MIN_RETENTION = Duration.days(4)
"""The shortest retention the released transport accepts on a delay queue (it refuses to start
below 345,600 s)."""
SQS_RETENTION_RANGE = (Duration.seconds(60), Duration.days(14))
"""What SQS takes for a queue's message retention (``MessageRetentionPeriod``, 60 to 1,209,600
seconds): checked before any keyword is compared with it, so a retention SQS refuses is blamed
on the keyword that gave it."""
QUEUE_RETENTION = Duration.days(4)
"""NServiceBus's default time to be received, written out so no reader has to know SQS's
default (also 4 days)."""
WRAP_OUTGOING_MESSAGES = True
"""Whether an endpoint's dispatcher wraps its messages (headers and base64 body in a JSON
envelope), the released transport's default; ``false`` is ``DoNotWrapOutgoingMessages``, which
writes the payload as the body and the headers into the ``NServiceBus.AmazonSQS.Headers``
attribute. The inbound relay delivers each message in its receiver's form, since a wrapping
receiver copies that attribute onto its delayed retries and error copies (retries that never
end, an error copy without ``FailedQ``)."""
DEAD_LETTER_RETENTION = Duration.days(14)
"""Dead-letter queues (of endpoints and of SNS subscriptions) keep messages as long as SQS
allows, so that an operator has time to redrive them."""

KEY_GRANULARITY = "perQueue"
"""A topology's ``keys``: a KMS key per queue group (an endpoint's queue, DLQ and delay queue; a
shadow or ingress queue and its DLQ), not one per account (``"perAccount"``). A key per queue
keeps what the stacks did before there was a choice (switching rewrites every queue's key, in
place, and a deployed topology should not change by an upgrade), confines a key's mistake or a
disabled key to one queue, and lets teams grant their endpoints' roles a queue's key by its
alias ``alias/messaging/<queue>``; at $1 a key a month, an organization of 500 endpoints pays
some $1,000 a month for it, which ``perAccount`` cuts to one key per account."""
QUEUE_KEY_ALIAS = "alias/messaging/queues"
"""The alias of an account's shared queue key (:class:`~constructs_lib.MessagingKey`), one name
in every account, so that a person or a team's policy finds it without its id."""

# Alarms ------------------------------------------------------------------------------------

MAX_MESSAGE_AGE_SECONDS = 900
"""The age of an endpoint queue's oldest message above which the endpoint is considered stuck
(15 minutes)."""
MAX_MESSAGE_AGE = Duration.seconds(MAX_MESSAGE_AGE_SECONDS)
MAX_MESSAGE_AGE_RANGE_SECONDS = (60, int(SQS_RETENTION_RANGE[1].to_seconds()))
"""From a minute (one metric period's worth of noise) to SQS's longest retention."""
ALARM_EVALUATION_PERIOD = Duration.minutes(5)
"""The alarms' metric period: one alarm evaluation every five minutes."""
PERSISTING_FAILURE_PERIODS = 3
"""Periods in a row with failures before a failure that SQS or SNS retries by itself is an
alarm: a relay's ``Failed`` messages (a throttled or refused send, retried on the next receive)
and the SNS endpoint's 5xx answers (retried along the delivery policy). A passing throttle
recovers within a period; a quarter of an hour of them is a destination, key or handler that
stays broken. What is never retried (a message dead-lettered or expired, a refused signature,
a function error) alarms on its first period."""
ALARM_PERIODS_UNDER_A_MINUTE_SECONDS = (1, 5, 10, 30)
"""The periods under a minute CloudWatch takes for a metric alarm (high resolution); longer
ones must be whole minutes."""

QUEUES_PER_GRAPH = 25
"""Queues one dashboard graph of oldest-message ages shows (a relay reading more gets more
graphs): a legend of some two dozen names stays readable, where CloudWatch would take 500
metrics in one graph."""
ALARMS_PER_STATUS_WIDGET = 100
"""The most alarms CloudWatch shows in one alarm status widget (the dashboard body's
``alarms`` array takes 1 to 100 ARNs); more go into further widgets."""

# Topics ------------------------------------------------------------------------------------

SUCCESS_SAMPLE_RATE = 100
"""Percentage of successful deliveries logged: all, so the delivery report sees every
retry that finally succeeded; failures are always logged."""
LOG_RETENTION = logs.RetentionDays.THREE_MONTHS
"""Of every log group the constructs create (delivery status, functions, Firehose errors,
the Spark job), which would otherwise keep logs forever; the analytics bucket keeps the
delivery logs for longer."""

# The account bridge (relays) ---------------------------------------------------------------

RELAY_BATCH_SIZE = 10
"""Messages per relay invocation, with no batching window. The relay sends ten messages in one
``SendMessageBatch``, so 10 already costs 0.1 send requests per message; measured against moto
with 15 ms added per request (``bench/bench_relay_batching.py``), 10 relays about 390 messages
per second per invocation and 100 about 240 (ten calls in a row), while a batching window, which
Lambda requires above 10, holds every message of a quiet queue for up to its length. So the
default favours latency; a busy standard queue may take up to 10,000 with a window to cut
invocations. FIFO queues stay at 10, the most their event source takes."""
RELAY_BATCH_SIZE_RANGE = (1, 10_000)
"""What Lambda's SQS event source takes from a standard queue."""
RELAY_FIFO_BATCH_SIZE = 10
"""The most Lambda's SQS event source takes from a FIFO queue (and it takes no window)."""
RELAY_MAX_BATCHING_WINDOW_RANGE = (Duration.seconds(1), Duration.minutes(5))
"""Lambda's batching window for SQS: required from 1 s when a batch may exceed 10 messages."""
RELAY_MAX_CONCURRENCY = 10
"""The most invocations one relay queue's event source runs at once (Lambda's
``MaximumConcurrency``): without it a flood into one ingress or shadow queue scales Lambda's
SQS polling up to the account's whole concurrency (1,000 by default), starving every other
function of the account, the other routes' relays among them. One invocation relays about 390
messages a second (:data:`RELAY_BATCH_SIZE`), so ten at once still move some 3,900 a second
through one queue."""
RELAY_MAX_CONCURRENCY_RANGE = (2, 1000)
"""What Lambda takes for an SQS event source's maximum concurrency."""
RELAY_MEMORY_MB = 256
"""The relay waits on SQS and S3 rather than computing (a large body is copied by S3 itself,
never held), and a batch reaches it as one event of at most Lambda's 6 MB: a quarter of a GB
holds the runtime and the largest batch with room, at half the SNS endpoint's, which spends
CPU on signature checks."""
RELAY_MIN_TIMEOUT_SECONDS = 60
"""The shortest relay function timeout, whatever the batch: a batch of ten needs one
``SendMessageBatch`` call, which gives up within 35 s, and a minute leaves room for a cold
start, a dead-letter send and the batch's log line. Longer batches get longer timeouts
(:mod:`constructs_lib.relay_timing`)."""
RELAY_RECEIVES_FOR_FAILURES = 10
"""The receives a relay source queue allows a message for failures of its own (a throttled or
failing send, a destination or key briefly refusing) before SQS moves it to the dead-letter
queue: with six minutes' visibility, an hour's outage loses nothing to the DLQ. A batch larger
than one invocation can send in the worst case gets more (:mod:`constructs_lib.relay_timing`),
so that no message reaches the DLQ untried."""
VISIBILITY_TIMEOUTS_PER_FUNCTION_TIMEOUT = 6
"""AWS's advice for Lambda's SQS event sources: a source queue's visibility timeout at least
six times the function's timeout, so that a message still being sent by one invocation (or
retried by Lambda after a throttled invocation) is not received by another."""
LAMBDA_MAX_TIMEOUT_SECONDS = 900
"""The longest timeout Lambda gives a function (15 minutes)."""
SQS_DEFAULT_VISIBILITY_TIMEOUT = Duration.seconds(30)
"""SQS's visibility timeout for a queue created without one."""
RELAY_STACK_NUMBER = 1
"""Which of an account's stacks holds a bridge: its first, whose relay roles carry no number
(``messaging-relay-<direction>-<account>``); an account whose bridge fills several stacks numbers
the others' roles ``-2``, ``-3``, ..."""

# The SNS HTTPS endpoint --------------------------------------------------------------------

SNS_ENDPOINT_MEMORY_MB = 512
"""Memory also buys CPU, which signature checks spend."""
LAMBDA_MEMORY_RANGE_MB = (128, 10_240)
"""What Lambda accepts for a function's memory (aws-cdk-lib only warns, at synth, below it)."""
SNS_ENDPOINT_REPLAY_WINDOW = Duration.seconds(DEFAULT_REPLAY_WINDOW_SECONDS)
"""How old a delivery's ``Timestamp`` may be before the endpoint refuses it as a replay: the
runtime's own default (the longest retry schedule a delivery policy allows, 3,600 s, with
300 s for clock skew and SNS's queueing), so a construct and a function configured without
one agree."""

# Delivery-log analytics --------------------------------------------------------------------

LOG_BUCKET_RETENTION_DAYS = 400
"""How long raw delivery logs (and Firehose's error output) are kept; reports twice as long."""
LOG_BUCKET_RETENTION = Duration.days(LOG_BUCKET_RETENTION_DAYS)
LOG_BUCKET_INFREQUENT_ACCESS_AFTER_DAYS = 30
"""Logs are read by the next day's report, then rarely: Standard-IA as soon as S3 allows."""
LOG_BUCKET_INFREQUENT_ACCESS_AFTER = Duration.days(LOG_BUCKET_INFREQUENT_ACCESS_AFTER_DAYS)
MIN_INFREQUENT_ACCESS_AFTER_DAYS = 30
"""S3 moves objects to Standard-IA no sooner than 30 days after their creation."""
MAX_RETENTION_DAYS = 36_500
"""A hundred years: longer is surely a mistake."""
MAX_REPORT_RETENTION_DAYS = 2 * MAX_RETENTION_DAYS
"""Reports are kept twice as long as logs by default, so their bound is twice the logs'."""
LOG_DESTINATION_NAME = "messaging-delivery-logs"
"""The CloudWatch Logs destination every account's topics stream to."""
ACCESS_LOG_RETENTION = Duration.days(90)
"""Of the server access logs of every bucket the constructs create: they answer "who read
this?" for a quarter."""
LOG_INCOMPLETE_UPLOAD_LIMIT = Duration.days(7)
"""A multipart upload into a log bucket (server access logs, delivery logs) unfinished after a
week was abandoned; its parts would be billed."""
FIREHOSE_BUFFERING_INTERVAL = Duration.minutes(5)
FIREHOSE_BUFFERING_SIZE = Size.mebibytes(64)
"""Up to five minutes or 64 MiB per object: few, large objects for Spark to read."""
FIREHOSE_BUFFERING_INTERVAL_RANGE_SECONDS = (0, 900)
FIREHOSE_BUFFERING_SIZE_RANGE_MIB = (1, 128)
"""What Firehose takes for an S3 destination's buffering hints (aws-cdk-lib's L1 stream does
not check them; CloudFormation would refuse the stream at deploy)."""
REPORT_SCHEDULE = "cron(30 0 * * ? *)"
"""Half past midnight UTC: the previous day's last Firehose buffer (at most 15 minutes) has
landed by then."""
REPORT_APPLICATION_NAME = "delivery-report"
REPORT_RELEASE_LABEL = "emr-spark-8.0.0"
"""AWS runtime for Apache Spark 8.0.0: Spark 4.0 (the job is written for Spark 4)."""
REPORT_MAX_VCPUS = 16
"""The application's cap (with 4 GB per vCPU), not a reservation: EMR Serverless bills only
what a run uses."""
REPORT_MAX_VCPUS_RANGE = (4, 400)
REPORT_IDLE_TIMEOUT = Duration.minutes(15)
"""How long the application stays warm after a run: a rerun soon after reuses it."""
REPORT_IDLE_TIMEOUT_RANGE_MINUTES = (1, 1440)
"""What EMR Serverless accepts for an application's auto-stop idle timeout."""

BODY_EXPIRATION_DAYS = 4
"""How long a message body offloaded to S3 is kept: the transport's default maximum time to
live (``MaxTimeToLive``, 4 days), which its own lifecycle rule turns into whole days."""
BODY_EXPIRATION = Duration.days(BODY_EXPIRATION_DAYS)
BODY_EXPIRATION_RANGE_DAYS = (1, 14)
"""SQS keeps a message at most 14 days; a body outliving every message that names it is waste,
one expiring before them is a message lost."""
BODY_INCOMPLETE_UPLOAD_LIMIT = Duration.days(1)
"""A body upload unfinished after a day belongs to a send that failed long ago."""
BODY_BUCKET_NAME_PREFIX = "messaging-bodies"
"""Body buckets are ``messaging-bodies-<account id>-<region>``: unique across S3's global
namespace, and computable in every other account without a lookup."""

RELAY_ROLE_GUARD_NAME = "messaging-relay-roles"
"""The name of :class:`~constructs_lib.RelayRoleGuard`'s service control policy in AWS
Organizations: what an administrator of the organization sees it by, beside the policies of
other teams."""
