"""moto's server, with CloudFormation support for two resource types its services already have.

moto implements Firehose and EMR Serverless, but its CloudFormation does not create them, and
a template that reads one of their attributes (``Fn::GetAtt Stream.Arn``,
``Application.ApplicationId``) is refused outright. The models below let CloudFormation
create them through moto's own backends, so the deployed stream and application are the real
moto resources (``describe-delivery-stream`` and ``get-application`` find them, Firehose
delivers into the moto bucket). CloudWatch Logs destinations and subscription filters are
:mod:`local_aws.moto.logs_destinations`' models; types moto has no service for at all
(EventBridge Scheduler schedules) are still skipped by moto, with a warning in its log.

Each reads only the attributes it has (:class:`~local_aws.moto.resource_model.ResourceModel`).
The models register themselves by subclassing when this module is imported;
``python -m local_aws.moto.main`` imports it before starting moto's server.
"""

from __future__ import annotations

from typing import Any

from moto.core.common_models import CloudFormationModel
from moto.emrserverless.models import Application, emrserverless_backends
from moto.firehose.models import firehose_backends

from local_aws.moto.resource_model import ResourceModel

_FIREHOSE_DESTINATIONS = {
    "ExtendedS3DestinationConfiguration": "extended_s3_destination_configuration",
    "S3DestinationConfiguration": "s3_destination_configuration",
    "HttpEndpointDestinationConfiguration": "http_endpoint_destination_configuration",
}


class DeliveryStreamResource(ResourceModel, CloudFormationModel):
    """``AWS::KinesisFirehose::DeliveryStream`` created in moto's Firehose backend."""

    TYPE = "AWS::KinesisFirehose::DeliveryStream"
    NAME_PROPERTY = "DeliveryStreamName"
    ATTRIBUTES = frozenset({"Arn"})

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
        name = cls.resource_name(resource_name, cloudformation_json)
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
        arn = f"arn:aws:firehose:{region_name}:{account_id}:deliverystream/{name}"
        return cls(name, {"Arn": arn})

    @classmethod
    def delete_from_cloudformation_json(
        cls,
        resource_name: str,
        cloudformation_json: dict[str, Any],
        account_id: str,
        region_name: str,
    ) -> None:
        firehose_backends[account_id][region_name].delete_delivery_stream(
            cls.resource_name(resource_name, cloudformation_json)
        )


class EmrServerlessApplicationResource(ResourceModel, CloudFormationModel):
    """``AWS::EMRServerless::Application`` created in moto's EMR Serverless backend."""

    TYPE = "AWS::EMRServerless::Application"
    NAME_PROPERTY = "Name"
    ATTRIBUTES = frozenset({"Arn", "ApplicationId"})

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
            name=cls.resource_name(resource_name, cloudformation_json),
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
        return cls(application.id, {"Arn": application.arn, "ApplicationId": application.id})

    @classmethod
    def delete_from_cloudformation_json(
        cls,
        resource_name: str,
        cloudformation_json: dict[str, Any],
        account_id: str,
        region_name: str,
    ) -> None:
        backend = emrserverless_backends[account_id][region_name]
        name = cls.resource_name(resource_name, cloudformation_json)
        for application_id, application in list(backend.applications.items()):
            if application.name == name:
                backend.delete_application(application_id)
