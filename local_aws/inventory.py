"""What the local AWS holds per account after a deployment, read back through its API."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from local_aws.accounts import AccountCredentials


@dataclass(frozen=True)
class QueueInfo:
    """One deployed queue and the attributes that show it is wired as the topology says."""

    arn: str
    url: str
    kms_key: str | None
    dead_letter_target: str | None
    max_receive_count: int | None


@dataclass(frozen=True)
class FunctionInfo:
    """One deployed Lambda function and how many event sources feed it."""

    name: str
    handler: str
    event_sources: int


@dataclass(frozen=True)
class AccountInventory:
    """The queues, keys and stacks of one account."""

    account_id: str
    queues: tuple[QueueInfo, ...]
    key_ids: tuple[str, ...]
    stacks: dict[str, str] = field(default_factory=dict)
    topic_arns: tuple[str, ...] = ()
    log_groups: tuple[str, ...] = ()
    functions: tuple[FunctionInfo, ...] = ()
    buckets: tuple[str, ...] = ()
    delivery_streams: tuple[str, ...] = ()
    spark_applications: tuple[str, ...] = ()
    """EMR Serverless applications, as ``<name> (<release label>)``."""

    @property
    def queue_arns(self) -> set[str]:
        """The ARNs of every queue in the account."""
        return {q.arn for q in self.queues}


def read_inventory(credentials: AccountCredentials, endpoint_url: str) -> AccountInventory:
    """List the account's queues (with their key and redrive), KMS keys, stacks, topics,
    log groups, functions, buckets, Firehose streams and EMR Serverless applications."""
    session = credentials.session()
    sqs = session.client("sqs", endpoint_url=endpoint_url)
    kms = session.client("kms", endpoint_url=endpoint_url)
    cloudformation = session.client("cloudformation", endpoint_url=endpoint_url)
    queues: list[QueueInfo] = []
    for url in sqs.list_queues().get("QueueUrls", []):
        attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
        redrive = json.loads(attributes.get("RedrivePolicy", "null")) or {}
        queues.append(
            QueueInfo(
                arn=attributes["QueueArn"],
                url=url,
                kms_key=attributes.get("KmsMasterKeyId"),
                dead_letter_target=redrive.get("deadLetterTargetArn"),
                max_receive_count=int(redrive["maxReceiveCount"]) if redrive else None,
            )
        )
    key_ids = tuple(k["KeyId"] for k in kms.list_keys()["Keys"])
    stacks = {
        s["StackName"]: s["StackStatus"]
        for s in cloudformation.list_stacks()["StackSummaries"]
        if s["StackStatus"] != "DELETE_COMPLETE"
    }
    topics = tuple(
        sorted(
            t["TopicArn"]
            for t in session.client("sns", endpoint_url=endpoint_url).list_topics()["Topics"]
        )
    )
    log_groups = tuple(
        sorted(
            g["logGroupName"]
            for g in session.client("logs", endpoint_url=endpoint_url).describe_log_groups()[
                "logGroups"
            ]
        )
    )
    lambda_client = session.client("lambda", endpoint_url=endpoint_url)
    functions = tuple(
        FunctionInfo(
            f["FunctionName"],
            f["Handler"],
            len(
                lambda_client.list_event_source_mappings(FunctionName=f["FunctionName"])[
                    "EventSourceMappings"
                ]
            ),
        )
        for f in lambda_client.list_functions()["Functions"]
    )
    buckets = tuple(
        sorted(
            b["Name"]
            for b in session.client("s3", endpoint_url=endpoint_url).list_buckets()["Buckets"]
        )
    )
    streams = tuple(
        sorted(
            session.client("firehose", endpoint_url=endpoint_url).list_delivery_streams()[
                "DeliveryStreamNames"
            ]
        )
    )
    applications = tuple(
        sorted(
            f"{a['name']} ({a['releaseLabel']})"
            for a in session.client(
                "emr-serverless", endpoint_url=endpoint_url
            ).list_applications()["applications"]
        )
    )
    return AccountInventory(
        credentials.account_id,
        tuple(sorted(queues, key=lambda q: q.arn)),
        key_ids,
        stacks,
        topics,
        log_groups,
        functions,
        buckets,
        streams,
        applications,
    )
