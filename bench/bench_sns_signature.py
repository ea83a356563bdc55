"""SNS signature verification throughput and the endpoint's cold import time.

Prints one JSON object:

- ``verifications_per_second``: :func:`cross_account_runtime.sns_endpoint.signature.verify` on one thread with a warm
  certificate cache (the steady state of a Lambda container), SignatureVersion 1 and 2, with a
  2048-bit RSA certificate like SNS's;
- ``cold_import_ms``: importing the Lambda entry module
  ``cross_account_runtime.sns_endpoint.lambda_handler`` (and with it everything it runs) in a
  fresh interpreter, measured inside it (median of several runs), and the whole process's wall
  time for comparison.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from cryptography.x509.oid import NameOID

from cross_account_runtime.sns_endpoint.signature import CertificateCache, string_to_sign, verify

ROOT = Path(__file__).resolve().parent.parent

CERT_URL = "https://sns.us-east-1.amazonaws.com/SimpleNotificationService-bench.pem"
SECONDS_PER_RUN = 2.0
IMPORT_RUNS = 9


def signing_certificate() -> tuple[rsa.RSAPrivateKey, bytes]:
    """A 2048-bit RSA key and a self-signed certificate for it, in PEM."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "sns.amazonaws.com")])
    now = dt.datetime.now(dt.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=30))
        .sign(key, hashes.SHA256())
    )
    return key, certificate.public_bytes(serialization.Encoding.PEM)


def signed_notification(key: rsa.RSAPrivateKey, version: str) -> dict[str, Any]:
    """A typical notification (a 1 KB NServiceBus-like body) signed as SNS signs it."""
    message: dict[str, Any] = {
        "Type": "Notification",
        "MessageId": "22b80b92-fdea-4c2c-8f9d-bdfb0c7bf324",
        "TopicArn": "arn:aws:sns:us-east-1:111111111111:Orders",
        "Subject": "OrderPlaced",
        "Message": json.dumps({"OrderId": 42, "Lines": ["x" * 40] * 20}),
        "Timestamp": "2026-06-01T11:59:55.000Z",
        "SignatureVersion": version,
        "SigningCertURL": CERT_URL,
    }
    digest = hashes.SHA1() if version == "1" else hashes.SHA256()
    signature = key.sign(string_to_sign(message).encode(), padding.PKCS1v15(), digest)
    message["Signature"] = base64.b64encode(signature).decode()
    return message


def verifications_per_second(message: dict[str, Any], certificate_pem: bytes) -> float:
    """Verifications per second after one warming call, over :data:`SECONDS_PER_RUN`."""
    cache = CertificateCache()

    def fetch(_url: str) -> bytes:
        return certificate_pem

    verify(message, fetch_certificate=fetch, cache=cache)
    count = 0
    started = time.perf_counter()
    deadline = started + SECONDS_PER_RUN
    while time.perf_counter() < deadline:
        for _ in range(100):
            verify(message, fetch_certificate=fetch, cache=cache)
        count += 100
    return count / (time.perf_counter() - started)


def cold_import() -> dict[str, float]:
    """Median import time of the entry module, and of the whole process, in fresh ones."""
    probe = (
        "import time; t = time.perf_counter(); "
        "import cross_account_runtime.sns_endpoint.lambda_handler; "
        "print((time.perf_counter() - t) * 1000)"
    )
    imports, processes = [], []
    for _ in range(IMPORT_RUNS):
        started = time.perf_counter()
        output = subprocess.run(
            [sys.executable, "-c", probe],
            cwd=ROOT,
            env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        processes.append((time.perf_counter() - started) * 1000)
        imports.append(float(output))
    return {
        "import_median_ms": round(statistics.median(imports), 1),
        "process_median_ms": round(statistics.median(processes), 1),
        "runs": IMPORT_RUNS,
    }


def main() -> None:
    key, certificate_pem = signing_certificate()
    result = {
        "verifications_per_second": {
            f"v{version}": round(
                verifications_per_second(signed_notification(key, version), certificate_pem)
            )
            for version in ("1", "2")
        },
        "rsa_key_bits": key.key_size,
        "cold_import_ms": cold_import(),
        "targets": {"v2_verifications_per_second": 2000, "cold_import_ms": 300},
        "python": platform.python_version(),
        "cpu_count": os.cpu_count(),
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
