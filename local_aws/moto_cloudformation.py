"""moto's server, with CloudFormation support for two resource types its services already have.

moto implements Firehose and EMR Serverless, but its CloudFormation does not create them, and
a template that reads one of their attributes (``Fn::GetAtt Stream.Arn``,
``Application.ApplicationId``) is refused outright. The models below let CloudFormation
create them through moto's own backends, so the deployed stream and application are the real
moto resources (``describe-delivery-stream`` and ``get-application`` find them, Firehose
delivers into the moto bucket). Types moto has no service for at all (CloudWatch Logs
destinations and subscription filters, EventBridge Scheduler schedules) are still skipped by
moto, with a warning in its log.

An attribute the models do not have fails the stack with moto's "does not support attribute
type" error (moto would otherwise log a warning and resolve it to nothing). The models register
themselves by subclassing when this module is imported;
``python -m local_aws.moto_main`` imports it before starting moto's server.
"""

from __future__ import annotations

from typing import Any

from moto.cloudformation.exceptions import UnformattedGetAttTemplateException
from moto.core.common_models import CloudFormationModel
from moto.emrserverless.models import Application, emrserverless_backends
from moto.firehose.models import firehose_backends

_FIREHOSE_DESTINATIONS = {
    "ExtendedS3DestinationConfiguration": "extended_s3_destination_configuration",
    "S3DestinationConfiguration": "s3_destination_configuration",
    "HttpEndpointDestinationConfiguration": "http_endpoint_destination_configuration",
}


class DeliveryStreamResource(CloudFormationModel):
    """``AWS::KinesisFirehose::DeliveryStream`` created in moto's Firehose backend."""

    def __init__(self, account_id: str, region: str, name: str) -> None:
        self.account_id = account_id
        self.region = region
        self.name = name

    @staticmethod
    def cloudformation_name_type() -> str:
        return "DeliveryStreamName"

    @staticmethod
    def cloudformation_type() -> str:
        return "AWS::KinesisFirehose::DeliveryStream"

    @classmethod
    def has_cfn_attr(cls, attr: str) -> bool:
        return attr == "Arn"

    @property
    def physical_resource_id(self) -> str:
        return self.name

    def get_cfn_attribute(self, attribute_name: str) -> str:
        if attribute_name != "Arn":
            raise UnformattedGetAttTemplateException()
        return f"arn:aws:firehose:{self.region}:{self.account_id}:deliverystream/{self.name}"

    @classmethod
    def create_from_cloudformation_json(
        cls,
        resource_name: str,
        cloudformation_json: dict[str, Any],
        account_id: str,
        region_name: str,
        **_: Any,
    ) -> DeliveryStreamResource:
        properties = cloudformation_json.get("Properties", {})
        name = properties.get("DeliveryStreamName") or resource_name
        destinations = {
            argument: properties.get(key) for key, argument in _FIREHOSE_DESTINATIONS.items()
        }
        firehose_backends[account_id][region_name].create_delivery_stream(
            region=region_name,
            delivery_stream_name=name,
            delivery_stream_type=properties.get("DeliveryStreamType", "DirectPut"),
            kinesis_stream_source_configuration=properties.get(
                "KinesisStreamSourceConfiguration", {}
            ),
            delivery_stream_encryption_configuration_input=properties.get(
                "DeliveryStreamEncryptionConfigurationInput", {}
            ),
            extended_s3_destination_configuration=destinations[
                "extended_s3_destination_configuration"
            ],
            s3_destination_configuration=destinations["s3_destination_configuration"],
            redshift_destination_configuration={},
            elasticsearch_destination_configuration={},
            splunk_destination_configuration={},
            http_endpoint_destination_configuration=destinations[
                "http_endpoint_destination_configuration"
            ],
            snowflake_destination_configuration={},
            iceberg_destination_configuration={},
            tags=properties.get("Tags", []),
        )
        return cls(account_id, region_name, name)

    @classmethod
    def delete_from_cloudformation_json(
        cls,
        resource_name: str,
        cloudformation_json: dict[str, Any],
        account_id: str,
        region_name: str,
    ) -> None:
        properties = cloudformation_json.get("Properties", {})
        name = properties.get("DeliveryStreamName") or resource_name
        firehose_backends[account_id][region_name].delete_delivery_stream(name)


class EmrServerlessApplicationResource(CloudFormationModel):
    """``AWS::EMRServerless::Application`` created in moto's EMR Serverless backend."""

    def __init__(self, application_id: str, arn: str) -> None:
        self.application_id = application_id
        self.arn = arn

    @staticmethod
    def cloudformation_name_type() -> str:
        return "Name"

    @staticmethod
    def cloudformation_type() -> str:
        return "AWS::EMRServerless::Application"

    @classmethod
    def has_cfn_attr(cls, attr: str) -> bool:
        return attr in ("Arn", "ApplicationId")

    @property
    def physical_resource_id(self) -> str:
        return self.application_id

    def get_cfn_attribute(self, attribute_name: str) -> str:
        if attribute_name == "Arn":
            return self.arn
        if attribute_name == "ApplicationId":
            return self.application_id
        raise UnformattedGetAttTemplateException()

    @classmethod
    def create_from_cloudformation_json(
        cls,
        resource_name: str,
        cloudformation_json: dict[str, Any],
        account_id: str,
        region_name: str,
        **_: Any,
    ) -> EmrServerlessApplicationResource:
        properties = cloudformation_json.get("Properties", {})
        backend = emrserverless_backends[account_id][region_name]
        application_type = properties["Type"]
        if application_type not in ("SPARK", "HIVE"):
            raise ValueError(
                f"{resource_name}: EMR Serverless application Type {application_type!r} is not "
                "one the service has; use SPARK or HIVE"
            )
        # Built directly: moto's create_application only knows the emr-<x>.<y>.0 release
        # labels, not the emr-spark-<x>.<y>.<z> ones of the AWS runtime for Apache Spark.
        application = Application(
            name=properties.get("Name") or resource_name,
            release_label=properties["ReleaseLabel"],
            application_type=application_type,
            client_token=resource_name,
            account_id=account_id,
            region_name=region_name,
            initial_capacity=properties.get("InitialCapacity"),
            maximum_capacity=properties.get("MaximumCapacity"),
            tags={t["Key"]: t["Value"] for t in properties.get("Tags", [])},
            auto_start_configuration=properties.get("AutoStartConfiguration"),
            auto_stop_configuration=properties.get("AutoStopConfiguration"),
            network_configuration=properties.get("NetworkConfiguration"),
        )
        backend.applications[application.id] = application
        return cls(application.id, application.arn)

    @classmethod
    def delete_from_cloudformation_json(
        cls,
        resource_name: str,
        cloudformation_json: dict[str, Any],
        account_id: str,
        region_name: str,
    ) -> None:
        backend = emrserverless_backends[account_id][region_name]
        name = cloudformation_json.get("Properties", {}).get("Name") or resource_name
        for application_id, application in list(backend.applications.items()):
            if application.name == name:
                backend.delete_application(application_id)
