"""Lambda's SQS event source mapping, played in-process for functions deployed to the local AWS.

moto deploys functions and their event source mappings but cannot run them (that needs
Docker), so nothing reads the relays' queues by itself. This module does what Lambda's poller
does for each SQS mapping: receive a batch, build the event Lambda builds, call the function's
real handler, and delete the messages the handler did not report failed.

How a call here matches a call in Lambda:

- each function runs its own copy of its handler's module, as each function runs in its own
  container: module-level state (the relay caches its configuration and its SQS clients on
  the first invocation) belongs to one function and survives between its invocations;
- the function's environment variables, and the ones Lambda sets (region, function name, the
  credentials of the function's account, ``LAMBDA_TASK_ROOT``), are applied for the call and
  restored afterwards;
- the function's deployed code is unpacked once per function, as Lambda unpacks it into
  ``/var/task``, into a folder of the poller's that ``LAMBDA_TASK_ROOT`` names: the handler's
  modules run from this project's runtime package, but the files shipped beside them (the
  relay's configuration) are read from what was deployed;
- the handler's boto3 clients reach moto, as the function's account; an SQS call naming a
  queue URL of another account is addressed to that account (moto keeps one state per account
  and does not route cross-account calls by itself, see :mod:`local_aws.accounts`);
- with ``ReportBatchItemFailures`` only the messages the handler did not report failed are
  deleted; the failed ones stay in flight and come back after their visibility timeout, as in
  Lambda. A handler that raises leaves the whole batch.

moto itself tries to invoke a mapped function whenever a message is sent to its queue; without
Docker the attempt fails and the message is made visible again, but the attempt counted as a
receive: a message's first delivery here shows ``ApproximateReceiveCount`` 2, and a source
queue's ``maxReceiveCount`` allows one real attempt less than in AWS.

Only handlers of this project's runtime package (:mod:`cross_account_runtime`) are imported: running arbitrary code named
by a deployed function is not what a local check of this project should do.
"""

from __future__ import annotations

import base64
import contextlib
import importlib.util
import io
import json
import os
import sys
import tempfile
import uuid
import zipfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import boto3

import cross_account_runtime
from cross_account_runtime.nservicebus.queue_arn import parse_queue_arn
from local_aws.accounts import AccountCredentials, routed_session
from local_aws.moto.lambda_code import download_code

RUNTIME_PACKAGE = cross_account_runtime.__name__
MAX_WARNING_LINES = 10
WARNING_LEVELS = frozenset({"WARNING", "ERROR", "CRITICAL"})
DEFAULT_MAX_ROUNDS = 20
MAX_SQS_BATCH = 10
LAMBDA_RECORD_ATTRIBUTES = (
    "ApproximateReceiveCount",
    "SentTimestamp",
    "SenderId",
    "ApproximateFirstReceiveTimestamp",
    "SequenceNumber",
    "MessageGroupId",
    "MessageDeduplicationId",
    "AWSTraceHeader",
    "DeadLetterQueueSourceArn",
)
"""The queue attributes Lambda passes in a record's ``attributes`` (when SQS has them)."""
_UNSET_FOR_THE_CALL = (
    "AWS_PROFILE",
    "AWS_SESSION_TOKEN",
    "AWS_SECURITY_TOKEN",
    "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS",
)
"""Variables of the calling shell that would send the handler's clients elsewhere."""

Handler = Callable[[Mapping[str, Any], Any], Any]


class HandlerRefusedError(ValueError):
    """A function's handler cannot be run here; the message names the function and the fix."""


class PumpLimitError(RuntimeError):
    """Queues still held messages after the last allowed round; the message names them."""


@dataclass(frozen=True)
class SqsMapping:
    """One enabled SQS event source mapping and the function it invokes."""

    uuid: str
    queue_arn: str
    function_arn: str
    function_name: str
    handler: str
    environment: Mapping[str, str]
    batch_size: int
    reports_batch_item_failures: bool
    memory_mb: int
    credentials: AccountCredentials


@dataclass(frozen=True)
class Invocation:
    """One poll of one mapping: what was received, what the handler answered, what was done."""

    mapping: SqsMapping
    received: tuple[str, ...]
    failed: tuple[str, ...] = ()
    deleted: int = 0
    error: str | None = None
    log_lines: tuple[str, ...] = ()
    undeleted: tuple[str, ...] = ()
    """Messages the handler was done with whose deletion SQS refused (they come back)."""


@dataclass(frozen=True)
class PumpResult:
    """Every invocation of a pump, in order, and how many rounds it took."""

    rounds: int
    invocations: tuple[Invocation, ...] = ()

    @property
    def received(self) -> int:
        """Messages handed to handlers (a redelivered message counts each time)."""
        return sum(len(i.received) for i in self.invocations)

    @property
    def kept(self) -> tuple[tuple[str, str], ...]:
        """``(queue ARN, message id)`` of every message left for redelivery: reported failed,
        in a batch whose handler raised, or not deleted because SQS refused."""
        kept: list[tuple[str, str]] = []
        for invocation in self.invocations:
            ids = invocation.received if invocation.error else invocation.failed
            kept.extend(
                (invocation.mapping.queue_arn, message_id)
                for message_id in (*ids, *invocation.undeleted)
            )
        return tuple(kept)

    def metrics(self) -> dict[MetricSource, dict[str, int]]:
        """The metrics its invocations wrote (:func:`summed_metrics`)."""
        return summed_metrics(self.invocations)

    @property
    def errors(self) -> tuple[str, ...]:
        """``<function>: <error>`` for every invocation whose handler raised."""
        return tuple(f"{i.mapping.function_name}: {i.error}" for i in self.invocations if i.error)

    def warning_lines(self, limit: int = MAX_WARNING_LINES) -> tuple[str, ...]:
        """``<function>: <line>`` for the functions' log lines at WARNING or above, and lines
        that are not JSON log records (a traceback, a bare print), at most ``limit`` of them
        and a last one counting the rest: why a message was refused or dead-lettered is in
        these lines, while the INFO ones only count messages."""
        lines = [
            f"{i.mapping.function_name}: {line}"
            for i in self.invocations
            for line in i.log_lines
            if _is_warning(line)
        ]
        if len(lines) <= limit:
            return tuple(lines)
        return (*lines[:limit], f"... and {len(lines) - limit} more line(s)")


@dataclass(frozen=True)
class LambdaContext:
    """The attributes of Lambda's context object that handlers read."""

    function_name: str
    invoked_function_arn: str
    memory_limit_in_mb: int
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    function_version: str = "$LATEST"

    @property
    def log_group_name(self) -> str:
        return f"/aws/lambda/{self.function_name}"

    def get_remaining_time_in_millis(self) -> int:
        """Nothing times a local call out; Lambda's largest timeout stands in."""
        return 900_000


def read_mappings(credentials: AccountCredentials, endpoint_url: str) -> tuple[SqsMapping, ...]:
    """The account's enabled SQS event source mappings, with each function's handler,
    environment and memory, as moto's Lambda API returns them."""
    client = credentials.session().client("lambda", endpoint_url=endpoint_url)
    mappings: list[SqsMapping] = []
    functions: dict[str, dict[str, Any]] = {}
    for page in client.get_paginator("list_event_source_mappings").paginate():
        for raw in page["EventSourceMappings"]:
            source = raw.get("EventSourceArn", "")
            if not source.startswith("arn:") or source.split(":")[2] != "sqs":
                continue
            if raw.get("State", "Enabled") != "Enabled":
                continue
            function_arn = raw["FunctionArn"]
            if function_arn not in functions:
                functions[function_arn] = client.get_function(FunctionName=function_arn)[
                    "Configuration"
                ]
            configuration = functions[function_arn]
            mappings.append(
                SqsMapping(
                    uuid=raw["UUID"],
                    queue_arn=source,
                    function_arn=function_arn,
                    function_name=configuration["FunctionName"],
                    handler=configuration["Handler"],
                    environment=dict(configuration.get("Environment", {}).get("Variables", {})),
                    batch_size=min(int(raw.get("BatchSize", MAX_SQS_BATCH)), MAX_SQS_BATCH),
                    reports_batch_item_failures="ReportBatchItemFailures"
                    in raw.get("FunctionResponseTypes", []),
                    memory_mb=int(configuration.get("MemorySize", 128)),
                    credentials=credentials,
                )
            )
    return tuple(sorted(mappings, key=lambda m: (m.queue_arn, m.uuid)))


def load_handler(function_name: str, handler: str) -> Handler:
    """A fresh copy of the handler's module (one per function, as a container has its own)
    and the handler in it; refuses handlers outside the runtime package."""
    module_name, _, attribute = handler.rpartition(".")
    if not module_name.startswith(RUNTIME_PACKAGE + ".") or not attribute:
        raise HandlerRefusedError(
            f"function {function_name}: handler {handler!r} is outside the {RUNTIME_PACKAGE} "
            f"package; only this project's handlers ({RUNTIME_PACKAGE}.<module>.<function>) "
            "run locally, so point the function's Handler at one of them"
        )
    spec = importlib.util.find_spec(module_name)
    if spec is None or spec.loader is None:
        raise HandlerRefusedError(
            f"function {function_name}: handler {handler!r}: module {module_name} does not "
            "exist; fix the function's Handler"
        )
    module = importlib.util.module_from_spec(spec)
    _execute_in_place(module, spec)
    entry = getattr(module, attribute, None)
    if not callable(entry):
        raise HandlerRefusedError(
            f"function {function_name}: handler {handler!r}: {module_name} has no function "
            f"{attribute!r}; fix the function's Handler"
        )
    handler_function: Handler = entry
    return handler_function


def _execute_in_place(module: ModuleType, spec: importlib.machinery.ModuleSpec) -> None:
    """Run the module's code with the copy registered under its name, so that code reading
    ``sys.modules[__name__]`` while it loads (dataclasses do) finds the copy; the module
    imported normally, if any, is put back afterwards."""
    assert spec.loader is not None
    previous = sys.modules.get(spec.name)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        if previous is None:
            del sys.modules[spec.name]
        else:
            sys.modules[spec.name] = previous


def lambda_record(message: Mapping[str, Any], queue_arn: str) -> dict[str, Any]:
    """The record Lambda builds from one message ``ReceiveMessage`` returned."""
    attributes = {
        name: value
        for name, value in message.get("Attributes", {}).items()
        if name in LAMBDA_RECORD_ATTRIBUTES
    }
    record: dict[str, Any] = {
        "messageId": message["MessageId"],
        "receiptHandle": message["ReceiptHandle"],
        "body": message["Body"],
        "attributes": attributes,
        "messageAttributes": {
            name: _lambda_attribute(attribute)
            for name, attribute in message.get("MessageAttributes", {}).items()
        },
        "md5OfBody": message["MD5OfBody"],
        "eventSource": "aws:sqs",
        "eventSourceARN": queue_arn,
        "awsRegion": queue_arn.split(":")[3],
    }
    if "MD5OfMessageAttributes" in message:
        record["md5OfMessageAttributes"] = message["MD5OfMessageAttributes"]
    return record


def _lambda_attribute(attribute: Mapping[str, Any]) -> dict[str, Any]:
    """A message attribute in Lambda's shape: camel-case keys, binary values in base64."""
    shaped: dict[str, Any] = {
        "stringListValues": list(attribute.get("StringListValues", [])),
        "binaryListValues": [
            base64.b64encode(value).decode() for value in attribute.get("BinaryListValues", [])
        ],
        "dataType": attribute["DataType"],
    }
    if "StringValue" in attribute:
        shaped["stringValue"] = attribute["StringValue"]
    if "BinaryValue" in attribute:
        shaped["binaryValue"] = base64.b64encode(attribute["BinaryValue"]).decode()
    return shaped


@contextlib.contextmanager
def _applied(variables: Mapping[str, str], unset: Sequence[str]) -> Iterator[None]:
    """``os.environ`` with ``variables`` set and ``unset`` removed; restored on exit."""
    names = [*variables, *unset]
    saved = {name: os.environ.get(name) for name in names}
    for name in unset:
        os.environ.pop(name, None)
    os.environ.update(variables)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@contextlib.contextmanager
def _default_session(session: boto3.session.Session) -> Iterator[None]:
    """``boto3.client(...)`` creates clients from ``session`` inside the block."""
    saved = boto3.DEFAULT_SESSION
    boto3.DEFAULT_SESSION = session
    try:
        yield
    finally:
        boto3.DEFAULT_SESSION = saved


class LambdaPoller:
    """Plays every SQS event source mapping of the given accounts.

    Keep one poller for a run: it holds each function's handler module (its "container"), so
    a function's second invocation is warm, as in Lambda.
    """

    def __init__(self, accounts: Sequence[AccountCredentials], endpoint_url: str) -> None:
        self.accounts = tuple(accounts)
        self.endpoint_url = endpoint_url
        self._sessions: dict[str, boto3.session.Session] = {}
        self._clients: dict[tuple[str, str], Any] = {}
        self._handlers: dict[str, Handler] = {}
        self._mappings: tuple[SqsMapping, ...] | None = None
        self._code = tempfile.TemporaryDirectory(prefix="lambda-task-roots-")
        """The functions' unpacked code, one folder per function; removed with the poller."""
        self._task_roots: dict[str, Path] = {}
        self.invocations: list[Invocation] = []
        """Every invocation that received messages, of every pump, in order."""

    def mappings(self) -> tuple[SqsMapping, ...]:
        """Every enabled SQS mapping of the accounts, read from moto on first use (a
        deployment does not change while its traffic runs)."""
        if self._mappings is None:
            self._mappings = tuple(
                m for c in self.accounts for m in read_mappings(c, self.endpoint_url)
            )
        return self._mappings

    def prepare(self, mappings: Sequence[SqsMapping]) -> None:
        """Load each mapped function's handler and unpack its code, so a refused one stops
        before anything moves."""
        for mapping in mappings:
            self._handler(mapping)
            self._task_root(mapping)

    def poll(self, mapping: SqsMapping) -> Invocation:
        """One receive-invoke-delete cycle of ``mapping``; nothing happens on an empty queue."""
        sqs = self.client(mapping.credentials, "sqs")
        url = self.queue_url(mapping.queue_arn)
        messages: list[dict[str, Any]] = sqs.receive_message(
            QueueUrl=url,
            MaxNumberOfMessages=mapping.batch_size,
            AttributeNames=["All"],
            MessageSystemAttributeNames=["All"],
            MessageAttributeNames=["All"],
            WaitTimeSeconds=0,
        ).get("Messages", [])
        received = tuple(m["MessageId"] for m in messages)
        if not messages:
            return Invocation(mapping, received)
        event = {"Records": [lambda_record(m, mapping.queue_arn) for m in messages]}
        response, error, log_lines = self._invoke(mapping, event)
        if error is not None:
            return Invocation(mapping, received, error=error, log_lines=log_lines)
        failed = (
            _reported_failures(response, received) if mapping.reports_batch_item_failures else ()
        )
        done = [m for m in messages if m["MessageId"] not in failed]
        undeleted: list[str] = []
        for start in range(0, len(done), MAX_SQS_BATCH):
            batch = done[start : start + MAX_SQS_BATCH]
            answer = sqs.delete_message_batch(
                QueueUrl=url,
                Entries=[
                    {"Id": str(index), "ReceiptHandle": m["ReceiptHandle"]}
                    for index, m in enumerate(batch)
                ],
            )
            # A refused entry leaves its message in the queue, to be received again.
            undeleted.extend(
                batch[int(entry["Id"])]["MessageId"] for entry in answer.get("Failed", [])
            )
        return Invocation(
            mapping,
            received,
            failed,
            len(done) - len(undeleted),
            log_lines=log_lines,
            undeleted=tuple(undeleted),
        )

    def pump(self, max_rounds: int = DEFAULT_MAX_ROUNDS) -> PumpResult:
        """Poll every mapping, round after round, until a round finds every queue empty.

        Raises :class:`PumpLimitError` naming the queues that still held messages when
        ``max_rounds`` rounds did not drain them (a loop between relays would do that).
        """
        if max_rounds < 1:
            raise ValueError(f"max_rounds is {max_rounds}; give at least 1")
        mappings = self.mappings()
        self.prepare(mappings)
        invocations: list[Invocation] = []
        for round_number in range(1, max_rounds + 1):
            this_round = [self.poll(mapping) for mapping in mappings]
            invocations.extend(i for i in this_round if i.received)
            self.invocations.extend(i for i in this_round if i.received)
            if not any(i.received for i in this_round):
                return PumpResult(round_number, tuple(invocations))
        still = self._waiting(mappings)
        if not still:
            return PumpResult(max_rounds, tuple(invocations))
        listed = ", ".join(f"{arn} ({count} message(s))" for arn, count in still.items())
        raise PumpLimitError(
            f"queues still held messages after {max_rounds} rounds: {listed}; a relay loop or "
            "a steady sender keeps them filled, or give more rounds (max_rounds)"
        )

    def metrics(self) -> dict[MetricSource, dict[str, int]]:
        """The metrics every invocation so far wrote (:func:`summed_metrics`)."""
        return summed_metrics(self.invocations)

    def _waiting(self, mappings: Sequence[SqsMapping]) -> dict[str, int]:
        """Visible messages per mapped queue that has any."""
        waiting: dict[str, int] = {}
        for mapping in mappings:
            attributes = self.client(mapping.credentials, "sqs").get_queue_attributes(
                QueueUrl=self.queue_url(mapping.queue_arn),
                AttributeNames=["ApproximateNumberOfMessages"],
            )["Attributes"]
            count = int(attributes.get("ApproximateNumberOfMessages", "0"))
            if count:
                waiting[mapping.queue_arn] = count
        return waiting

    def _invoke(
        self, mapping: SqsMapping, event: dict[str, Any]
    ) -> tuple[Any, str | None, tuple[str, ...]]:
        """Call the handler as the function: its environment, its account, its stdout
        captured (Lambda sends it to CloudWatch Logs); returns the response, the error of a
        handler that raised, and the log lines."""
        handler = self._handler(mapping)
        credentials = mapping.credentials
        variables = {
            **mapping.environment,
            **credentials.environment(self.endpoint_url),
            "AWS_LAMBDA_FUNCTION_NAME": mapping.function_name,
            "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
            "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(mapping.memory_mb),
            "LAMBDA_TASK_ROOT": str(self._task_root(mapping)),
        }
        context = LambdaContext(mapping.function_name, mapping.function_arn, mapping.memory_mb)
        output = io.StringIO()
        error: str | None = None
        response: Any = None
        with (
            _applied(variables, _UNSET_FOR_THE_CALL),
            _default_session(self._session(credentials)),
            contextlib.redirect_stdout(output),
        ):
            try:
                response = handler(event, context)
            except Exception as raised:
                # Lambda logs the error and leaves the batch for redelivery; so does this.
                error = f"{type(raised).__name__}: {raised}"
        return response, error, tuple(output.getvalue().splitlines())

    def _handler(self, mapping: SqsMapping) -> Handler:
        handler = self._handlers.get(mapping.function_arn)
        if handler is None:
            handler = self._handlers[mapping.function_arn] = load_handler(
                mapping.function_name, mapping.handler
            )
        return handler

    def _task_root(self, mapping: SqsMapping) -> Path:
        """The folder holding the function's deployed code, unpacked on first use."""
        root = self._task_roots.get(mapping.function_arn)
        if root is None:
            root = Path(self._code.name) / f"{len(self._task_roots)}-{mapping.function_name}"
            with zipfile.ZipFile(
                io.BytesIO(download_code(self.endpoint_url, mapping.function_arn))
            ) as package:
                package.extractall(root)
            self._task_roots[mapping.function_arn] = root
        return root

    def _session(self, credentials: AccountCredentials) -> boto3.session.Session:
        session = self._sessions.get(credentials.account_id)
        if session is None:
            session = self._sessions[credentials.account_id] = routed_session(credentials)
        return session

    def client(self, credentials: AccountCredentials, service: str) -> Any:
        """A client of ``service`` acting as the account, whose SQS calls reach queues of
        other accounts by URL (kept: creating a boto3 client costs tens of milliseconds)."""
        key = (credentials.account_id, service)
        client = self._clients.get(key)
        if client is None:
            client = self._clients[key] = self._session(credentials).client(
                service, endpoint_url=self.endpoint_url
            )
        return client

    def queue_url(self, queue_arn: str) -> str:
        """The URL the local AWS serves the queue at: ``<endpoint>/<account>/<queue name>``."""
        arn = parse_queue_arn(queue_arn)
        return f"{self.endpoint_url}/{arn.account}/{arn.name}"


@dataclass(frozen=True, order=True)
class MetricSource:
    """A function and the dimensions its metrics lines carry (``Service``, ``Direction``)."""

    function: str
    dimensions: tuple[tuple[str, str], ...]

    def __str__(self) -> str:
        return " ".join([self.function, *(value for _, value in self.dimensions)])


def summed_metrics(invocations: Sequence[Invocation]) -> dict[MetricSource, dict[str, int]]:
    """Per function and its metrics' dimensions, the sum of each metric its
    embedded-metric-format lines carried, as CloudWatch would count them: a line whose ``_aws``
    directive names its metrics."""
    sums: dict[MetricSource, dict[str, int]] = {}
    for invocation in invocations:
        for line in invocation.log_lines:
            for dimensions, values in _embedded_metrics(line):
                into = sums.setdefault(
                    MetricSource(invocation.mapping.function_name, dimensions), {}
                )
                for name, value in values.items():
                    into[name] = into.get(name, 0) + value
    return sums


def _embedded_metrics(line: str) -> list[tuple[tuple[tuple[str, str], ...], dict[str, int]]]:
    """The metrics of one embedded-metric-format line: per directive, its dimensions (name and
    value) and each metric's value (none for any other line)."""
    try:
        record = json.loads(line)
    except ValueError:
        return []
    if not isinstance(record, dict) or not isinstance(record.get("_aws"), dict):
        return []
    found = []
    for directive in record["_aws"].get("CloudWatchMetrics", []):
        names = [n for dimension_set in directive["Dimensions"] for n in dimension_set]
        values = {m["Name"]: int(record[m["Name"]]) for m in directive["Metrics"]}
        found.append((tuple((n, str(record[n])) for n in names), values))
    return found


def _is_warning(line: str) -> bool:
    """Whether a log line is at WARNING or above, or is not a JSON log record at all."""
    try:
        record = json.loads(line)
    except ValueError:
        return bool(line.strip())
    return not isinstance(record, dict) or record.get("level") in WARNING_LEVELS


def _reported_failures(response: Any, received: Sequence[str]) -> tuple[str, ...]:
    """The message ids a partial batch response reports failed.

    Lambda treats a malformed response, or one naming a message not in the batch, as a
    failure of the whole batch; so does this.
    """
    items = response.get("batchItemFailures") if isinstance(response, dict) else None
    if items is None:
        return ()
    ids = [item.get("itemIdentifier") if isinstance(item, dict) else None for item in items]
    if not all(isinstance(i, str) and i in received for i in ids):
        return tuple(received)
    return tuple(i for i in ids if isinstance(i, str))


def pump(
    accounts: Sequence[AccountCredentials],
    endpoint_url: str,
    *,
    max_rounds: int = DEFAULT_MAX_ROUNDS,
) -> PumpResult:
    """Run every SQS mapping of ``accounts`` until no mapped queue has messages (at most
    ``max_rounds`` rounds); see :meth:`LambdaPoller.pump`."""
    return LambdaPoller(accounts, endpoint_url).pump(max_rounds)
