"""Firehose writes to S3 in the local AWS as in AWS: one object per buffer, when it is full or
its interval has passed, under the prefix's evaluated expressions (or the default hourly one
appended), compressed and named as configured. Plain moto writes each ``PutRecordBatch`` at
once under the prefix taken literally, so every test here fails without the teaching."""

from __future__ import annotations

import gzip
import time
from datetime import UTC, datetime
from typing import Any

import pytest

from local_aws.moto.firehose_s3 import age_firehose_buffers
from tests.local_aws.accounts import client, fresh_account

pytestmark = pytest.mark.moto


def stream(endpoint_url: str, **s3: Any) -> tuple[Any, Any, str, str]:
    """A fresh account's bucket and stream writing into it; ``(firehose, s3, stream, bucket)``."""
    account = fresh_account(endpoint_url)
    s3_client = client(account, "s3", endpoint_url)
    firehose = client(account, "firehose", endpoint_url)
    bucket = f"firehose-{account.account_id}"
    s3_client.create_bucket(Bucket=bucket)
    firehose.create_delivery_stream(
        DeliveryStreamName="Logs",
        ExtendedS3DestinationConfiguration={
            "RoleARN": f"arn:aws:iam::{account.account_id}:role/Firehose",
            "BucketARN": f"arn:aws:s3:::{bucket}",
            **s3,
        },
    )
    return firehose, s3_client, "Logs", bucket


def keys(s3: Any, bucket: str) -> list[str]:
    return [o["Key"] for o in s3.list_objects_v2(Bucket=bucket).get("Contents", [])]


def test_a_buffer_is_written_once_its_interval_has_passed_gzip_under_the_evaluated_prefix(
    moto_endpoint: str,
) -> None:
    firehose, s3, name, bucket = stream(
        moto_endpoint,
        Prefix="logs/!{timestamp:yyyy/MM/dd}/",
        BufferingHints={"IntervalInSeconds": 60, "SizeInMBs": 1},
        CompressionFormat="GZIP",
    )
    before = time.time()
    firehose.put_record_batch(DeliveryStreamName=name, Records=[{"Data": b"a\n"}])
    firehose.put_record(DeliveryStreamName=name, Record={"Data": b"b\n"})
    assert keys(s3, bucket) == []

    age_firehose_buffers(moto_endpoint, 60)

    (key,) = keys(s3, bucket)
    arrived = datetime.fromtimestamp(before - 60, UTC)
    assert key.startswith(f"logs/{arrived:%Y/%m/%d}/{name}-1-{arrived:%Y-%m-%d-}")
    assert key.endswith(".gz")
    body = s3.get_object(Bucket=bucket, Key=key)["Body"].read()
    assert gzip.decompress(body) == b"a\nb\n"


def test_a_full_buffer_is_written_at_once_under_the_default_hourly_prefix(
    moto_endpoint: str,
) -> None:
    firehose, s3, name, bucket = stream(
        moto_endpoint,
        Prefix="static/",
        BufferingHints={"IntervalInSeconds": 900, "SizeInMBs": 1},
        CompressionFormat="UNCOMPRESSED",
    )
    half = b"x" * (512 * 1024)
    before = datetime.now(UTC)
    firehose.put_record(DeliveryStreamName=name, Record={"Data": half})
    assert keys(s3, bucket) == []
    firehose.put_record(DeliveryStreamName=name, Record={"Data": half})
    after = datetime.now(UTC)

    (key,) = keys(s3, bucket)
    assert key.startswith(
        tuple(f"static/{moment:%Y/%m/%d/%H}/{name}-1-" for moment in (before, after))
    )
    assert s3.get_object(Bucket=bucket, Key=key)["Body"].read() == half + half
