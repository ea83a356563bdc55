"""What the cost report assumes about use that the templates cannot say, each beside its
reason: the traffic's shape and what AWS does per call. The templates give the rest (batch
sizes, memory, key reuse periods, retention, what exists)."""

from __future__ import annotations

from cross_account_runtime.relay.send_batches import MAX_BATCH_ENTRIES

MESSAGE_BYTES = 4_096
"""A message's size as SQS counts it (body and attributes): an NServiceBus message with its
headers is typically one to a few KiB. ``--message-bytes`` changes it."""
SQS_PAYLOAD_CHUNK = 65_536
"""SQS bills each 64 KiB of a request's payload as one request."""
SQS_MAX_RECEIVE = 10
"""Messages one ReceiveMessage returns at most (and entries one DeleteMessageBatch takes):
Lambda's poller receives and deletes a batch larger than this in several calls."""
RELAY_SEND_ENTRIES = MAX_BATCH_ENTRIES
"""Entries of the relay's SendMessageBatch calls (:mod:`cross_account_runtime.relay.send_batches`)."""
SEND_CALL_SECONDS = 0.05
"""Billed relay duration per SendMessageBatch call: ``bench/bench_relay_batching.py`` measured
26 to 42 ms per call (10 and 100 messages per batch) with 15 ms of latency added per request;
50 ms rounds that up for a real network."""
LOG_BYTES_PER_INVOCATION = 1_220
"""A relay invocation's log: Lambda's START, END and REPORT lines and the relay's one
``batch relayed`` line without its message ids (700 bytes), and its metrics line (about 520
bytes with the core counts, :mod:`cross_account_runtime.relay.outcomes`)."""
LOG_BYTES_PER_MESSAGE = 90
"""What each forwarded message adds to the ``batch relayed`` line (its id and the id it was
sent under)."""
DEFAULT_KMS_DATA_KEY_REUSE_SECONDS = 300
"""SQS's data key reuse period for a queue whose template sets none."""
KMS_CALLS_PER_QUEUE_HOP = 2
"""Per queue a message passes and per reuse period: the sender's GenerateDataKey and the
receiver's Decrypt; both cache the data key for the period."""
QUEUE_HOPS = 3
"""Encrypted queues a message passes through the bridge: the sender's shadow, the receiver
account's ingress queue, the receiver's queue."""
SPREAD_DAYS = 30
"""The million messages are counted as spread evenly over a month on one route: KMS requests
are per reuse period, not per message, so a faster million costs less. ``--over-days``."""
SECONDS_PER_MONTH = 30 * 86_400
IDLE_POLLERS = 5
"""Long polls Lambda keeps open on each SQS event source while the queue is empty, as commonly
reported (AWS's documentation gives no number): an estimate, and the report says so."""
LONG_POLL_SECONDS = 20
"""SQS's longest ReceiveMessage wait, which Lambda's pollers use."""
DEFAULT_LAMBDA_MEMORY_MB = 128
"""Lambda's memory for a function whose template sets none."""
RETENTION_WITHOUT_EXPIRY_MONTHS = 12
"""A log group that never expires is counted as keeping a year of logs."""
