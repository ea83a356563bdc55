"""Each delivery writes one embedded-metric-format line: 1 for its outcome and 0 for every
other, and ``SignatureRefused`` for a forgery, under the endpoint's service."""

from __future__ import annotations

from collections.abc import Mapping

from cross_account_runtime.common.emf import metrics_line
from cross_account_runtime.sns_endpoint.receiver import SnsHttpsReceiver
from tests.runtime.common.test_emf import spec_problems
from tests.runtime.sns_endpoint.conftest import (
    UNLISTED_TOPIC_ARN,
    Harness,
    Signer,
    function_url_event,
)

Written = list[tuple[dict[str, str], dict[str, int]]]


def writing_to(receiver: SnsHttpsReceiver, written: Written) -> SnsHttpsReceiver:
    def keep(dimensions: Mapping[str, str], counts: Mapping[str, int]) -> None:
        written.append((dict(dimensions), dict(counts)))

    receiver.metrics = keep
    return receiver


def test_each_delivery_counts_its_outcome_and_zero_for_the_others(
    harness: Harness, signer: Signer
) -> None:
    written: Written = []
    receiver = writing_to(harness.receiver(), written)

    receiver(function_url_event(signer.confirmation()))
    receiver(function_url_event(signer.confirmation(topic_arn=UNLISTED_TOPIC_ARN)))

    (dimensions, processed), (_, rejected) = written
    assert dimensions == {"Service": receiver.logger.service}
    assert {name for name, value in processed.items() if value} == {"Confirmed"}
    assert {name for name, value in rejected.items() if value} == {"Rejected"}
    assert set(processed) == {
        "Processed",
        "Duplicate",
        "Confirmed",
        "Unsubscribed",
        "Rejected",
        "Retry",
        "Error",
        "SignatureRefused",
    }
    assert spec_problems(metrics_line(dimensions, processed)) == []


def test_a_forged_signature_is_counted_as_refused(harness: Harness, signer: Signer) -> None:
    written: Written = []
    receiver = writing_to(harness.receiver(), written)
    forged = signer.notification()
    forged["Message"] = "pay the attacker"

    response = receiver(function_url_event(forged))

    assert response["statusCode"] == 403
    ((_, counts),) = written
    assert (counts["Rejected"], counts["SignatureRefused"]) == (1, 1)
