"""Golden tests: the verbatim records of the reference, parsed field by field."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from cross_account_runtime.delivery_report.detect import Layout
from tests.runtime.delivery_report.conftest import classified_rows, write_lines

pytestmark = pytest.mark.spark

DATA_PROTECTION = (
    '{"notification":{"messageMD5Sum":"29638742ffb68b32cf56f42a79bcf16b","messageId":'
    '"34d9b400-c6dd-5444-820d-fbeb0f1f54cf","topicArn":"arn:aws:sns:us-east-1:123412341234:'
    'PII-data-topic","timestamp":"2022-05-12T2:12:44Z"},"delivery":{"deliveryId":'
    '"98236591c-56aa-51ee-a5ed-0c7d43493170","destination":"arn:aws:sqs:us-east-1:123456789012:'
    'NoNameAccess","providerResponse":"The topic\'s data protection policy prohibits this '
    'message from being delivered to <subscription-arn>","dwellTimeMs":20,"attempts":1,'
    '"statusCode":403},"status":"FAILURE"}'
)
LAMBDA = (
    '{"notification":{"messageMD5Sum":"ed5359919d1600abfdb43cb90b01ba9c","messageId":'
    '"3fcf1d02-fe87-5fb0-9358-424556de759d","topicArn":"arn:aws:sns:us-east-2:111122223333:'
    'testSNStopic","timestamp":"2024-08-27 10:10:33.576"},"delivery":{"deliveryId":'
    '"72f4e6e9-dd5e-58c8-828e-b9ae7507af70","destination":"arn:aws:lambda:us-east-2:'
    '111122223333:function:SNSLambdaTester","providerResponse":"{\\"lambdaRequestId\\":'
    '\\"a2f654bc-9d46-483c-b62a-870e4c4bbee9\\"}","dwellTimeMs":47,"statusCode":202},'
    '"status":"SUCCESS"}'
)
APNS = (
    '{"status":"FAILURE","notification":{"timestamp":"2015-01-26 23:29:35.678","messageId":'
    '"c3ad79b0-8996-550a-8bfa-24f05989898f"},"delivery":{"statusCode":8,"dwellTimeMs":1451,'
    '"token":"examp1e29z6j5c4df46f80189c4c83fjcgf7f6257e98542d2jt3395kj73","attempts":1,'
    '"providerResponse":"NotificationErrorResponse(command=8, status=InvalidToken, id=1, '
    'cause=null)","destination":"arn:aws:sns:us-east-2:111122223333:endpoint/APNS_SANDBOX/'
    'APNSPushApp/986cb8a1-4f6b-34b1-9a1b-d9e9cb553944"}}'
)
SMS = (
    '{"notification":{"messageId":"34d9b400-c6dd-5444-820d-fbeb0f1f54cf","timestamp":'
    '"2016-06-28 00:40:34.558"},"delivery":{"phoneCarrier":"My Phone Carrier","mnc":270,'
    '"numberOfMessageParts":1,"destination":"+1XXX5550100","priceInUSD":0.00645,"smsType":'
    '"Transactional","mcc":310,"providerResponse":"Message has been accepted by phone carrier",'
    '"dwellTimeMs":599,"dwellTimeMsUntilDeviceAck":1344},"status":"SUCCESS"}'
)
TLS = (
    '{"notification":{"messageId":"...","topicArn":"arn:aws:sns:ap-northeast-1:***:***",'
    '"timestamp":"2021-05-12 06:41:20.778"},"delivery":{"deliveryId":"***","destination":'
    '"https://***","providerResponse":"SSLPeerUnverifiedException in HttpClient",'
    '"dwellTimeMs":66171,"attempts":4},"status":"FAILURE"}'
)

APNS_GROUP = "sns/us-east-2/111122223333/app/APNS_SANDBOX/APNSPushApp/Failure"
SMS_GROUP = "sns/us-east-1/111122223333/DirectPublishToPhoneNumber"

EXPECTED: dict[str, dict[str, Any]] = {
    "34d9b400-c6dd-5444-820d-fbeb0f1f54cf/sqs": {
        "topic": "arn:aws:sns:us-east-1:123412341234:PII-data-topic",
        "topic_source": "record",
        "message_md5": "29638742ffb68b32cf56f42a79bcf16b",
        "delivery_id": "98236591c-56aa-51ee-a5ed-0c7d43493170",
        "destination": "arn:aws:sqs:us-east-1:123456789012:NoNameAccess",
        "published_at": datetime(2022, 5, 12, 2, 12, 44),
        "delivered_at": datetime(2022, 5, 12, 2, 12, 44, 20000),
        "protocol": "sqs",
        "status": "FAILURE",
        "status_code": 403,
        "attempts": 1,
        "dwell_ms": 20,
        "retried": False,
        "cause": "data_protection_policy",
        "error_code": None,
        "http_4xx_success": False,
    },
    "3fcf1d02-fe87-5fb0-9358-424556de759d/lambda": {
        "topic": "arn:aws:sns:us-east-2:111122223333:testSNStopic",
        "topic_source": "record",
        "published_at": datetime(2024, 8, 27, 10, 10, 33, 576000),
        "delivered_at": datetime(2024, 8, 27, 10, 10, 33, 623000),
        "protocol": "lambda",
        "status": "SUCCESS",
        "status_code": 202,
        "attempts": None,
        "dwell_ms": 47,
        "retried": False,
        "cause": None,
        "provider_response": '{"lambdaRequestId":"a2f654bc-9d46-483c-b62a-870e4c4bbee9"}',
    },
    "c3ad79b0-8996-550a-8bfa-24f05989898f/application": {
        "topic": "arn:aws:sns:us-east-2:111122223333:app/APNS_SANDBOX/APNSPushApp",
        "topic_source": "log_group",
        "topic_arn": None,
        "message_md5": None,
        "published_at": datetime(2015, 1, 26, 23, 29, 35, 678000),
        "protocol": "application",
        "status": "FAILURE",
        "status_code": 8,
        "attempts": 1,
        "dwell_ms": 1451,
        "cause": "provider_error",
        "error_code": "InvalidToken",
        "token": "examp1e29z6j5c4df46f80189c4c83fjcgf7f6257e98542d2jt3395kj73",
        "log_group": APNS_GROUP,
    },
    "34d9b400-c6dd-5444-820d-fbeb0f1f54cf/sms": {
        "topic": "arn:aws:sns:us-east-1:111122223333:DirectPublishToPhoneNumber",
        "topic_source": "log_group",
        "destination": "+1XXX5550100",
        "delivery_id": None,
        "protocol": "sms",
        "status": "SUCCESS",
        "status_code": None,
        "dwell_ms": 599,
        "phone_carrier": "My Phone Carrier",
        "mcc": 310,
        "mnc": 270,
        "price_usd": 0.00645,
        "sms_type": "Transactional",
        "message_parts": 1,
        "dwell_until_device_ack_ms": 1344,
        "cause": None,
    },
    ".../http/s": {
        "topic": "arn:aws:sns:ap-northeast-1:***:***",
        "destination": "https://***",
        "published_at": datetime(2021, 5, 12, 6, 41, 20, 778000),
        "delivered_at": datetime(2021, 5, 12, 6, 42, 26, 949000),
        "protocol": "http/s",
        "status": "FAILURE",
        "status_code": None,
        "attempts": 4,
        "retried": True,
        "dwell_ms": 66171,
        "cause": "tls_error",
    },
}


def _by_key(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {f"{r['message_id']}/{r['protocol']}": r for r in rows}


def _assert_golden(rows: list[dict[str, Any]]) -> None:
    assert [r["reject_reason"] for r in rows] == [None] * 5
    actual = _by_key(rows)
    assert sorted(actual) == sorted(EXPECTED)
    for key, fields in EXPECTED.items():
        assert {name: actual[key][name] for name in fields} == fields, key


def test_reference_records_as_json_lines(spark: SparkSession, tmp_path: Path) -> None:
    write_lines(tmp_path / "records.jsonl", [DATA_PROTECTION, LAMBDA, TLS])
    write_lines(tmp_path / APNS_GROUP / "apns.jsonl", [APNS])
    write_lines(tmp_path / SMS_GROUP / "sms.jsonl", [SMS])
    rows = classified_rows(spark, [tmp_path])
    _assert_golden(rows)
    assert {r["layout"] for r in rows} == {"jsonl"}


def test_reference_records_as_export_lines(spark: SparkSession, tmp_path: Path) -> None:
    stamp = "2024-08-27T10:10:33.700Z"
    write_lines(
        tmp_path / "topics/task-1/stream-a/000000.gz",
        [f"{stamp} {line}" for line in (DATA_PROTECTION, LAMBDA, TLS)],
        compress=True,
    )
    write_lines(
        tmp_path / APNS_GROUP / "task-2/stream-b/000000.gz", [f"{stamp} {APNS}"], compress=True
    )
    write_lines(
        tmp_path / SMS_GROUP / "task-3/stream-c/000000.gz", [f"{stamp} {SMS}"], compress=True
    )
    rows = classified_rows(spark, [tmp_path], Layout.EXPORT)
    _assert_golden(rows)
    assert {r["log_time"] for r in rows} == {datetime(2024, 8, 27, 10, 10, 33, 700000)}
    assert {r["log_stream"] for r in rows} == {"stream-a", "stream-b", "stream-c"}
