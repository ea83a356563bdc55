"""What the topology means compared with what the templates grant: expected and actual
access, relay hops and delivery-log edges in one comparable shape each, so a test asserts that
the two are equal."""

from __future__ import annotations

from collections.abc import Sequence

from constructs_lib import RelayDirection
from constructs_lib.delivery_logged_topic.topic import delivery_log_group_names
from constructs_lib.queue_naming import (
    dead_letter_queue_name,
    ingress_queue_name,
    subscription_dead_letter_queue_name,
)
from cross_account_runtime.delivery_report.bucket_paths import (
    ERROR_PREFIX,
    FIREHOSE_ERROR_PREFIX,
    FIREHOSE_PREFIX,
    LOG_PREFIX,
    REPORT_PREFIX,
    bucket_name,
)
from stacks.checks.access_report.delivery_logs import ACTION_OF_PREFIX_ACCESS
from stacks.checks.access_report.records import AccessReport, PrincipalRecord
from stacks.delivery_log_stack import delivery_log_destination_arn
from stacks.placement.plan import StackPlan
from stacks.placement.relays import ingress_writers
from stacks.topology import Topology
from stacks.topology.bridge import bridge_shadows, ingress_endpoints


def principal_set(grants: Sequence[PrincipalRecord]) -> set[tuple[str, str]]:
    """The principals of a list of grants as comparable pairs."""
    return {next(iter(g["principal"].items())) for g in grants}


Access = dict[str, dict[str, set[tuple[str, str]]]]
"""Per queue and topic ARN, per grant kind (``send`` and ``receive``, or ``publish`` and
``subscribe``), the principals as ``(kind, value)`` pairs, as :func:`principal_set` gives them."""


def expected_access(topology: Topology, plan: StackPlan) -> Access:
    """What the topology means, its units placed by ``plan``: per queue and topic ARN, the
    principals of each grant kind.

    Senders and publishers in the resource's own account are authorized by IAM, so they have
    no policy grant; nobody outside the owner account may receive; an endpoint's DLQ grants
    nobody; its delay queue admits its senders; a queue subscribed to a topic admits that
    topic; a subscription's DLQ admits that topic; the bridge's shadows grant nobody and an
    ingress queue admits exactly the outbound relay roles of the stacks whose shadows lead to
    it, each by its ARN (:func:`~stacks.placement.relays.ingress_writers`); other accounts may
    subscribe only their own queues.
    """
    expected: Access = {}

    def nobody(account: str, *names: str) -> None:
        for name in names:
            expected[topology.sqs_arn(account, name)] = {"send": set(), "receive": set()}

    for queue in topology.all_queues:
        send = {("account", a) for a in topology.cross_account_senders(queue)}
        send |= {("organization", o) for o in topology.sender_organizations(queue)}
        subscribed = {
            ("topic", topology.topic_arn(t)) for t, _ in topology.queue_subscriptions(queue)
        }
        expected[topology.queue_arn(queue)] = {"send": send | subscribed, "receive": set()}
        nobody(queue.account, queue.dead_letter_queue_name)
        if not queue.is_platform_queue:
            # The delay queue admits the queue's senders: long delays go there directly.
            expected[topology.sqs_arn(queue.account, queue.delay_queue_name)] = {
                "send": send,
                "receive": set(),
            }
    bridge = bridge_shadows(topology)
    for shadow in bridge.shadows:
        nobody(shadow.account, shadow.queue_name, dead_letter_queue_name(shadow.queue_name))
        if shadow.delay_queue_name is not None:
            nobody(
                shadow.account,
                shadow.delay_queue_name,
                dead_letter_queue_name(shadow.delay_queue_name),
            )
    for account in topology.accounts:
        for endpoint in ingress_endpoints(topology, account.name):
            ingress = ingress_queue_name(endpoint.queue_name)
            expected[topology.sqs_arn(account.name, ingress)] = {
                "send": {("role", role) for role in ingress_writers(topology, plan, endpoint)},
                "receive": set(),
            }
            nobody(account.name, dead_letter_queue_name(ingress))
    for topic in topology.topics:
        publish = {("account", a) for a in topology.cross_account_publishers(topic)}
        publish |= {("organization", o) for o in topic.publisher_organizations}
        subscribe = {("account", a) for a in topology.subscriber_accounts(topic)}
        expected[topology.topic_arn(topic)] = {"publish": publish, "subscribe": subscribe}
        for subscription in topic.subscriptions:
            owner = (
                topology.endpoint(subscription.endpoint).account
                if subscription.endpoint
                else topic.account
            )
            dlq = subscription_dead_letter_queue_name(topic.topic_name, subscription.name)
            expected[topology.sqs_arn(owner, dlq)] = {
                "send": {("topic", topology.topic_arn(topic))},
                "receive": set(),
            }
    return expected


RelayEdge = tuple[str, str, str]
"""(direction, from, to) of a relay hop: ``outbound`` from a shadow queue to the remote ingress
queue, ``inbound`` from the ingress queue to the endpoint queue."""


def expected_relay_edges(topology: Topology) -> set[RelayEdge]:
    """(direction, from, to) for every relay hop: each shadow queue (and its delay queue's
    shadow) to the remote ingress queue, each ingress queue to its endpoint queue."""
    edges: set[RelayEdge] = set()
    for shadow in bridge_shadows(topology).shadows:
        remote = shadow.remote
        ingress = topology.sqs_arn(remote.account, ingress_queue_name(remote.queue_name))
        for name in (shadow.queue_name, shadow.delay_queue_name):
            if name is not None:
                edges.add(
                    (RelayDirection.OUTBOUND, topology.sqs_arn(shadow.account, name), ingress)
                )
        edges.add((RelayDirection.INBOUND, ingress, topology.queue_arn(remote)))
    return edges


def actual_relay_edges(report: AccessReport) -> set[RelayEdge]:
    """The report's relay hops in the shape of :func:`expected_relay_edges`."""
    return {(r["direction"], r["from"], r["to"]) for r in report["relays"]}


PlatformPath = tuple[str, str, str, str]
"""(kind, shadow, ingress, queue) of a path through the bridge into a platform queue: the
topology field that declares the queue, the shadow another account's endpoints send to, the
ingress queue the outbound relay forwards to and the queue the inbound relay delivers to."""


def expected_platform_paths(topology: Topology) -> set[PlatformPath]:
    """Every way into each platform queue from another account: each shadow leading to it (one
    per name its endpoints resolve, in every account with endpoints but its own), through its
    ingress queue."""
    bridge = bridge_shadows(topology)
    paths: set[PlatformPath] = set()
    for queue in topology.platform_queues:
        if queue.platform is None:
            continue
        ingress = topology.sqs_arn(queue.account, ingress_queue_name(queue.queue_name))
        paths |= {
            (
                queue.platform.value,
                topology.sqs_arn(shadow.account, shadow.queue_name),
                ingress,
                topology.queue_arn(queue),
            )
            for shadow in bridge.leads_to(queue)
        }
    return paths


def actual_platform_paths(report: AccessReport) -> set[PlatformPath]:
    """The report's paths into platform queues in the shape of :func:`expected_platform_paths`."""
    return {
        (q["kind"], p["shadow"], p["ingress"], q["queue"])
        for q in report["platform_queues"]
        for p in q["paths"]
    }


LogDataEdge = tuple[str, str, str]
"""(kind, from, to): ``subscription-filter`` (log group ARN to destination ARN), ``delivers``
and ``delivers-errors`` (destination to the S3 location its Firehose stream writes records and
failures to), and ``read``, ``write``, ``delete`` (the service assuming a role, or a
bucket-policy principal, to an ``s3://bucket/prefix``)."""


def expected_log_data_edges(topology: Topology) -> set[LogDataEdge]:
    """Where the topology means delivery logs to go: each topic's success and failure log
    groups to the analytics destination, through Firehose into the log prefix of the analytics
    bucket (failures under the error prefix), written by Firehose only and read by the daily
    job, which alone writes (and replaces) reports. Nothing without ``analytics``."""
    destination = delivery_log_destination_arn(topology)
    if topology.analytics is None or destination is None:
        return set()
    edges: set[LogDataEdge] = set()
    for topic in topology.log_streaming_topics:
        account = topology.account(topic.account)
        for name in delivery_log_group_names(topic.topic_name, account.region, account.id):
            log_group = (
                f"arn:{account.partition}:logs:{account.region}:{account.id}:log-group:{name}"
            )
            edges.add(("subscription-filter", log_group, destination))
    analytics = topology.account(topology.analytics.account)
    bucket = f"s3://{bucket_name(analytics.id, analytics.region)}/"
    firehose, job = "firehose.amazonaws.com", "emr-serverless.amazonaws.com"
    return edges | {
        ("delivers", destination, bucket + FIREHOSE_PREFIX),
        ("delivers-errors", destination, bucket + FIREHOSE_ERROR_PREFIX),
        ("write", firehose, bucket + LOG_PREFIX),
        ("write", firehose, bucket + ERROR_PREFIX),
        ("read", job, bucket + LOG_PREFIX),
        ("read", job, bucket + REPORT_PREFIX),
        ("write", job, bucket + REPORT_PREFIX),
        ("delete", job, bucket + REPORT_PREFIX),
    }


def actual_log_data_edges(report: AccessReport) -> set[LogDataEdge]:
    """The report's delivery-log edges in the shape of :func:`expected_log_data_edges`.

    A destination whose target is not a Firehose stream of the assembly leads to the target's
    ARN; a role is named by who assumes it, since CloudFormation names the roles.
    """
    logs = report["delivery_logs"]
    edges: set[LogDataEdge] = {
        ("subscription-filter", f["log_group"], f["destination"])
        for f in logs["subscription_filters"]
    }
    for d in logs["destinations"]:
        edges.add(("delivers", d["destination"], d["location"] or d["target"]))
        if d["error_location"]:
            edges.add(("delivers-errors", d["destination"], d["error_location"]))
    for bucket in logs["buckets"]:
        for grant in bucket["access"]:
            principals = grant["assumed_by"] or [grant["principal"]]
            for kind in ACTION_OF_PREFIX_ACCESS:
                for prefix in grant[kind]:
                    for principal in principals:
                        source = next(iter(principal.values()))
                        edges.add((kind, source, f"s3://{bucket['bucket']}/{prefix}"))
    return edges


def actual_access(report: AccessReport) -> Access:
    """The report reduced to the same shape as :func:`expected_access`."""
    actual: Access = {
        q["queue"]: {"send": principal_set(q["send"]), "receive": principal_set(q["receive"])}
        for q in report["queues"]
    }
    for t in report["topics"]:
        actual[t["topic"]] = {
            "publish": principal_set(t["publish"]),
            "subscribe": principal_set(t["subscribe"]),
        }
    return actual
