"""A bucket's lifecycle rules, ownership controls and public access block from CloudFormation.

moto's ``AWS::S3::Bucket`` model applies only ``BucketEncryption`` and ``Tags``
(``FakeBucket.create_from_cloudformation_json`` in ``moto/s3/models.py``) and drops the rest, so
a deployed bucket answers ``NoSuchLifecycleConfiguration``, ``OwnershipControlsNotFoundError``
and ``NoSuchPublicAccessBlockConfiguration`` where its stack set them (the delivery-log buckets'
expiry and transition rules, ``BucketOwnerEnforced``, the public access block; the
``cdk bootstrap`` staging bucket's rules). :func:`register` makes the model also put those three
through moto's S3 backend, as the S3 API would, so they read back as the template wrote them.
moto stores them and acts on none (its lifecycle rules expire nothing), as for the API.

They are applied when the bucket is created; an update leaves them as they were, as moto's
model does for everything but encryption and tags. A lifecycle rule property the conversion
does not know fails the stack, naming it, rather than leaving a rule that covers other objects
than the template says.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from moto.cloudformation.exceptions import ValidationError
from moto.s3.models import FakeBucket, s3_backends
from moto.utilities.utils import get_partition

from local_aws.moto.patching import replacing

PROPERTIES = ("LifecycleConfiguration", "OwnershipControls", "PublicAccessBlockConfiguration")
"""The ``AWS::S3::Bucket`` properties :func:`register` teaches moto's model."""

_PATCHED = "_local_aws_bucket_configuration"

_RULE_PROPERTIES: dict[str, Callable[[Any], dict[str, Any]]] = {
    "Id": lambda value: {"ID": value},
    "Status": lambda value: {"Status": value},
    "Prefix": lambda value: {"Filter": {"Prefix": value}},
    "ExpirationInDays": lambda value: {"Expiration": {"Days": value}},
    "Transitions": lambda value: {
        "Transition": [
            {"Days": t["TransitionInDays"], "StorageClass": t["StorageClass"]} for t in value
        ]
    },
    "NoncurrentVersionExpiration": lambda value: {"NoncurrentVersionExpiration": value},
    "AbortIncompleteMultipartUpload": lambda value: {"AbortIncompleteMultipartUpload": value},
}
"""CloudFormation lifecycle rule properties and their S3 API form, as moto parses it."""


def _lifecycle_rules(bucket: str, configuration: dict[str, Any]) -> list[dict[str, Any]]:
    """The template's ``LifecycleConfiguration`` as S3 API rules; a rule without ``Prefix``
    covers the whole bucket, as an empty filter does."""
    rules = []
    for index, rule in enumerate(configuration["Rules"]):
        unknown = sorted(set(rule) - set(_RULE_PROPERTIES))
        if unknown:
            raise ValidationError(
                message=f"{bucket}: LifecycleConfiguration.Rules[{index}]: the local AWS does "
                f"not model {unknown}; it models {sorted(_RULE_PROPERTIES)}"
            )
        converted: dict[str, Any] = {"Filter": {"Prefix": ""}}
        for name, value in rule.items():
            converted.update(_RULE_PROPERTIES[name](value))
        rules.append(converted)
    return rules


def _configure(bucket: FakeBucket, properties: dict[str, Any], account_id: str) -> None:
    backend = s3_backends[account_id][get_partition(bucket.region_name)]
    if "LifecycleConfiguration" in properties:
        backend.put_bucket_lifecycle_configuration(
            bucket.name, _lifecycle_rules(bucket.name, properties["LifecycleConfiguration"])
        )
    if "OwnershipControls" in properties:
        (rule,) = properties["OwnershipControls"]["Rules"]
        backend.put_bucket_ownership_controls(bucket.name, ownership=rule["ObjectOwnership"])
    if "PublicAccessBlockConfiguration" in properties:
        backend.put_public_access_block(bucket.name, properties["PublicAccessBlockConfiguration"])


def register() -> None:
    """Make moto's ``AWS::S3::Bucket`` apply the three configurations on create. Idempotent."""
    original = FakeBucket.create_from_cloudformation_json

    @replacing(FakeBucket, "create_from_cloudformation_json", _PATCHED)
    def create_from_cloudformation_json(
        _cls: type[FakeBucket],
        /,
        resource_name: str,
        cloudformation_json: dict[str, Any],
        account_id: str,
        region_name: str,
        **kwargs: Any,
    ) -> FakeBucket:
        bucket = original(resource_name, cloudformation_json, account_id, region_name, **kwargs)
        _configure(bucket, cloudformation_json.get("Properties", {}), account_id)
        return bucket
