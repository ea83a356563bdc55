"""The local AWS server process: moto's server with this package's CloudFormation models
(:mod:`local_aws.moto.cloudformation`, :mod:`local_aws.moto.sns_subscriptions`,
:mod:`local_aws.moto.resource_policies`), a bucket's configurations from templates
(:mod:`local_aws.moto.s3_buckets`), SNS deliveries into the queue's account
(:mod:`local_aws.moto.sns_subscriptions`), CloudWatch alarms from templates
(:mod:`local_aws.moto.cloudwatch_alarms`), SNS delivery-status logs of those deliveries
(:mod:`local_aws.moto.sns_delivery_logs`, over :mod:`local_aws.moto.delivery_status`), HTTP/S
deliveries to mapped hosts with their confirmation and retries
(:mod:`local_aws.moto.sns_http_deliveries`), Lambda deliveries recorded, not run
(:mod:`local_aws.moto.sns_lambda_deliveries`), bucket policies stored but not enforced
(:mod:`local_aws.moto.resource_policies`), its SQS time travel (:mod:`local_aws.moto.time_travel`),
FIFO queue delays as SQS applies them (:mod:`local_aws.moto.fifo_delay`), functions' code for
the Lambda poller (:mod:`local_aws.moto.lambda_code`), CloudWatch Logs destinations and
subscription filters that deliver to Firehose (:mod:`local_aws.moto.logs_destinations`) and
Firehose's buffered, prefixed, compressed S3 writes (:mod:`local_aws.moto.firehose_s3`).

``python -m local_aws.moto.main -H 127.0.0.1 -p PORT`` takes moto server's own arguments;
:class:`local_aws.moto.server.MotoServer` runs it. The models live in their own modules because
moto names a model's service after the second part of its module's name (here ``moto``, from
``local_aws.moto.…``), which ``__main__`` has not.
"""

from __future__ import annotations

import json
import sys

from moto.server import main as moto_main

from local_aws.moto import (
    delivery_status,
    fifo_delay,
    firehose_s3,
    lambda_code,
    logs_destinations,
    resource_policies,
    s3_buckets,
    sns_delivery_logs,
    sns_http_deliveries,
    sns_lambda_deliveries,
    sns_subscriptions,
    time_travel,
)
from local_aws.moto.cloudformation import (
    DeliveryStreamResource,
    EmrServerlessApplicationResource,
)
from local_aws.moto.cloudwatch_alarms import AlarmResource
from local_aws.moto.logs_destinations import DestinationResource, SubscriptionFilterResource
from local_aws.moto.resource_policies import (
    BucketPolicyResource,
    QueuePolicyResource,
    TopicPolicyResource,
)
from local_aws.moto.sns_subscriptions import SubscriptionResource


def main(argv: list[str] | None = None) -> None:
    """Say which models, routes and behaviours were added (in moto's log), then serve."""
    time_travel.register()
    fifo_delay.register()
    lambda_code.register()
    sns_subscriptions.register()
    delivery_status.register()
    sns_delivery_logs.register()
    sns_http_deliveries.register()
    sns_lambda_deliveries.register()
    resource_policies.register()
    s3_buckets.register()
    logs_destinations.register()
    firehose_s3.register()
    added = [
        DeliveryStreamResource.cloudformation_type(),
        EmrServerlessApplicationResource.cloudformation_type(),
        SubscriptionResource.cloudformation_type(),
        QueuePolicyResource.cloudformation_type(),
        TopicPolicyResource.cloudformation_type(),
        BucketPolicyResource.cloudformation_type(),
        DestinationResource.cloudformation_type(),
        SubscriptionFilterResource.cloudformation_type(),
        AlarmResource.cloudformation_type(),
    ]
    print(
        json.dumps(
            {
                "cloudformation_models_added": added,
                "cloudformation_properties_added": {"AWS::S3::Bucket": list(s3_buckets.PROPERTIES)},
                "routes_added": [
                    time_travel.AGE_MESSAGES_PATH,
                    lambda_code.CODE_PATH,
                    firehose_s3.AGE_BUFFERS_PATH,
                    delivery_status.DELIVERIES_PATH,
                    sns_http_deliveries.HOSTS_PATH,
                    sns_http_deliveries.CONFIRMATION_PATH,
                    sns_http_deliveries.AGE_RETRIES_PATH,
                    sns_http_deliveries.ATTEMPTS_PATH,
                ],
                "behaviours_added": [
                    "a FIFO queue's own delay despite DelaySeconds=0",
                    "SNS delivers to an SQS queue in the account its ARN names",
                    "SNS delivers nothing to a subscription pending confirmation",
                    "SNS logs the delivery status of SQS deliveries through the topic's role",
                    "SNS confirms, delivers to and retries HTTP/S subscriptions on mapped hosts",
                    "SNS records Lambda deliveries (accepted, or the function missing) unrun",
                    "S3 stores bucket policies without enforcing them",
                    "a subscription filter delivers to another account's destination it admits",
                    "Firehose buffers, prefixes and compresses its S3 objects as configured",
                ],
            }
        ),
        file=sys.stderr,
        flush=True,
    )
    moto_main(argv)


if __name__ == "__main__":
    main()
