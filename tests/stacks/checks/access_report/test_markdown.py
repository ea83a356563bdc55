"""The Markdown says plainly what the report holds, including what is missing: a queue nobody
outside its account may use, a resource that does not deny non-TLS requests, no delivery logs."""

from __future__ import annotations

from stacks.checks.access_report import AccessReport, to_markdown

QUEUE = "arn:aws:sqs:us-east-1:111111111111:Sales"


def _report_of_one_queue(*, denies_insecure_transport: bool) -> AccessReport:
    return {
        "queues": [
            {
                "queue": QUEUE,
                "stack": "Messaging-Sales",
                "owner": "111111111111",
                "encryption": "kms",
                "send": [],
                "receive": [],
                "denies_insecure_transport": denies_insecure_transport,
                "key_users": [],
            }
        ],
        "topics": [],
        "subscriptions": [],
        "relays": [],
        "events": [],
        "platform_queues": [],
        "delivery_logs": {
            "subscription_filters": [],
            "destinations": [],
            "streams": [],
            "buckets": [],
        },
    }


def test_a_queue_without_grants_says_only_its_owner_account_may_use_it() -> None:
    markdown = to_markdown(_report_of_one_queue(denies_insecure_transport=True))
    section = markdown[markdown.index(f"### `{QUEUE}`") : markdown.index("## Topics")]
    assert "Owner account `111111111111` (its IAM principals, by their own policies); " in section
    assert "encryption: kms; non-TLS requests denied: yes." in section
    assert "| - | no grant beyond the owner account | - | - |" in section


def test_a_queue_that_admits_plain_http_says_no_in_capitals() -> None:
    markdown = to_markdown(_report_of_one_queue(denies_insecure_transport=False))
    assert "non-TLS requests denied: NO." in markdown


def test_without_delivery_logs_the_section_says_they_stay_in_their_accounts() -> None:
    markdown = to_markdown(_report_of_one_queue(denies_insecure_transport=True))
    assert markdown.endswith(
        "## Delivery logs\n\nNo subscription filter, destination or Firehose stream: delivery "
        "logs stay in their accounts.\n"
    )
