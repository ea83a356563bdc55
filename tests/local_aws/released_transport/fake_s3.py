"""An S3 client double for the unit tests, in the spirit of the upstream tests' MockS3Client
(``src/NServiceBus.Transport.SQS.Tests/MockS3Client.cs``): objects are kept per bucket and key,
every request is recorded."""

from __future__ import annotations

import io
from types import SimpleNamespace
from typing import Any

from tests.local_aws.released_transport.fake_sqs import client_error


class FakeS3:
    """Records every call as ``(operation, keyword arguments)``."""

    def __init__(self, *buckets: str, region: str = "us-east-1") -> None:
        self.meta = SimpleNamespace(region_name=region)
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self.objects: dict[tuple[str, str], bytes] = {}
        self.buckets: list[str] = list(buckets)
        self.lifecycle_rules: dict[str, list[dict[str, Any]]] = {}

    def calls(self, operation: str) -> list[dict[str, Any]]:
        """The keyword arguments of every call of ``operation``, in order."""
        return [kwargs for name, kwargs in self.requests if name == operation]

    def put_object(self, **kwargs: Any) -> dict[str, Any]:
        self.requests.append(("put_object", kwargs))
        self.objects[kwargs["Bucket"], kwargs["Key"]] = bytes(kwargs["Body"])
        return {}

    def get_object(self, **kwargs: Any) -> dict[str, Any]:
        self.requests.append(("get_object", kwargs))
        key = (kwargs["Bucket"], kwargs["Key"])
        if key not in self.objects:
            raise client_error("NoSuchKey", "The specified key does not exist.", 404)
        return {"Body": io.BytesIO(self.objects[key]), "ContentLength": len(self.objects[key])}

    def list_buckets(self, **kwargs: Any) -> dict[str, Any]:
        self.requests.append(("list_buckets", kwargs))
        return {"Buckets": [{"Name": name} for name in self.buckets]}

    def create_bucket(self, **kwargs: Any) -> dict[str, Any]:
        self.requests.append(("create_bucket", kwargs))
        self.buckets.append(kwargs["Bucket"])
        return {}

    def get_bucket_lifecycle_configuration(self, **kwargs: Any) -> dict[str, Any]:
        self.requests.append(("get_bucket_lifecycle_configuration", kwargs))
        if kwargs["Bucket"] not in self.lifecycle_rules:
            raise client_error(
                "NoSuchLifecycleConfiguration", "The lifecycle configuration does not exist", 404
            )
        return {"Rules": self.lifecycle_rules[kwargs["Bucket"]]}

    def put_bucket_lifecycle_configuration(self, **kwargs: Any) -> dict[str, Any]:
        self.requests.append(("put_bucket_lifecycle_configuration", kwargs))
        self.lifecycle_rules[kwargs["Bucket"]] = kwargs["LifecycleConfiguration"]["Rules"]
        return {}
