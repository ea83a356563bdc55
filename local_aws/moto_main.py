"""The local AWS server process: moto's server with this package's CloudFormation models
(:mod:`local_aws.moto_cloudformation`, :mod:`local_aws.moto_sns_subscriptions`,
:mod:`local_aws.moto_resource_policies`), a bucket's configurations from templates
(:mod:`local_aws.moto_s3_buckets`), SNS deliveries into the queue's account
(:mod:`local_aws.moto_sns_subscriptions`), bucket policies stored but not enforced
(:mod:`local_aws.moto_resource_policies`), its SQS time travel (:mod:`local_aws.moto_time_travel`),
FIFO queue delays as SQS applies them (:mod:`local_aws.moto_fifo_delay`) and functions' code for
the Lambda poller (:mod:`local_aws.moto_lambda_code`).

``python -m local_aws.moto_main -H 127.0.0.1 -p PORT`` takes moto server's own arguments;
:class:`local_aws.moto_server.MotoServer` runs it. The models live in their own modules because
moto names a model's service after its module, which ``__main__`` has not.
"""

from __future__ import annotations

import json
import sys

from moto.server import main as moto_main

from local_aws import (
    moto_fifo_delay,
    moto_lambda_code,
    moto_resource_policies,
    moto_s3_buckets,
    moto_sns_subscriptions,
    moto_time_travel,
)
from local_aws.moto_cloudformation import (
    DeliveryStreamResource,
    EmrServerlessApplicationResource,
)
from local_aws.moto_resource_policies import (
    BucketPolicyResource,
    QueuePolicyResource,
    TopicPolicyResource,
)
from local_aws.moto_sns_subscriptions import SubscriptionResource


def main(argv: list[str] | None = None) -> None:
    """Say which models, routes and behaviours were added (in moto's log), then serve."""
    moto_time_travel.register()
    moto_fifo_delay.register()
    moto_lambda_code.register()
    moto_sns_subscriptions.register()
    moto_resource_policies.register()
    moto_s3_buckets.register()
    added = [
        DeliveryStreamResource.cloudformation_type(),
        EmrServerlessApplicationResource.cloudformation_type(),
        SubscriptionResource.cloudformation_type(),
        QueuePolicyResource.cloudformation_type(),
        TopicPolicyResource.cloudformation_type(),
        BucketPolicyResource.cloudformation_type(),
    ]
    print(
        json.dumps(
            {
                "cloudformation_models_added": added,
                "cloudformation_properties_added": {
                    "AWS::S3::Bucket": list(moto_s3_buckets.PROPERTIES)
                },
                "routes_added": [moto_time_travel.AGE_MESSAGES_PATH, moto_lambda_code.CODE_PATH],
                "behaviours_added": [
                    "a FIFO queue's own delay despite DelaySeconds=0",
                    "SNS delivers to an SQS queue in the account its ARN names",
                    "SNS delivers nothing to a subscription pending confirmation or to Lambda",
                    "S3 stores bucket policies without enforcing them",
                ],
            }
        ),
        file=sys.stderr,
        flush=True,
    )
    moto_main(argv)


if __name__ == "__main__":
    main()
