"""Spark job: failed, retried and lost SNS deliveries from delivery-status logs in S3.

Run ``python -m cross_account_runtime.delivery_report --help``; ``docs/delivery_report.md`` has the details.
"""
