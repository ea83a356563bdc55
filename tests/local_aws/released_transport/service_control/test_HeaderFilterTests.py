# ruff: noqa: N802, N999 -- module and test names are the upstream test's, for traceability
"""ServiceControl 6.19.2 ``src/ServiceControl.UnitTests/Recoverability/HeaderFilterTests.cs``
with its approval file ``ApprovalFiles/HeaderFilterTests.RemovesHeaders.approved.txt``, and the
deterministic id ServiceControl names failed messages by
(``src/ServiceControl/Infrastructure/DeterministicGuid.cs``)."""

from __future__ import annotations

from local_aws.released_transport.dotnet.deterministic_guid import make_id
from local_aws.released_transport.service_control.main_instance import (
    retry_headers,
    unique_message_id,
)

KEPT = {
    "NServiceBus.MessageId": "caf68027-acce-4260-8442-ac6500e46afc",
    "NServiceBus.MessageIntent": "Publish",
    "NServiceBus.RelatedTo": "2e6c6c9c-c4cb-474e-98b8-ac6500e46a0c",
    "NServiceBus.ConversationId": "37c405c8-e4e4-4873-8eb4-ac6500e46621",
    "NServiceBus.CorrelationId": "6e449174-6f77-4da4-b9c0-ac6500e46621",
    "NServiceBus.OriginatingMachine": "MACHINE",
    "NServiceBus.OriginatingEndpoint": "PurchaseOrderService.1.0",
    "$.diagnostics.originating.hostid": "4f8138bdb0421ffe1ceaee86e9145721",
    "NServiceBus.OriginatingSagaId": "9e0d2f01-e903-481a-b272-ac6500e46715",
    "NServiceBus.OriginatingSagaType": "PowerSupplyPurchaseOrderService.PurchaseOrderSaga, PowerSupplyPurchaseOrderService, Version=1.0.0.0, Culture=neutral, PublicKeyToken=null",
    "NServiceBus.ReplyToAddress": "PowerSupplyPurchaseOrderService.1.0@[dbo]@[Market.NServiceBus.Prod]",
    "NServiceBus.ContentType": "application/json",
    "NServiceBus.EnclosedMessageTypes": "PowerSupplyPurchaseOrderService.ApiModels.Events.v1_0.PowerSupplyDebtorBlacklistCheckCompleted, PowerSupplyOrderService.ApiModels, Version=1.0.0.0, Culture=neutral, PublicKeyToken=null",
    "NServiceBus.Version": "7.1.0",
    "NServiceBus.TimeSent": "2020-10-31 13:59:26:479745 Z",
    "NServiceBus.Timeout.RouteExpiredTimeoutTo": "Crm.PowerSupplySalesOrderManager.1.0@[dbo]@[Market.NServiceBus.Prod]",
    "NServiceBus.Timeout.Expire": "2020-10-31 13,59,25,359877 Z",
    "NServiceBus.RelatedToTimeoutId": "2c6aa21f-7e73-4142-de86-08d87432ffe4",
    "NServiceBus.ProcessingMachine": "MACHINE",
    "NServiceBus.ProcessingEndpoint": "SeasNve.Market.Crm.PowerSupplySalesOrderManager.1.0",
    "$.diagnostics.hostid": "8d8fcac767fbd7199024c5cae57adde5",
    "$.diagnostics.hostdisplayname": "MACHINE",
    "ServiceControl.Retry.UniqueMessageId": "a5f6da09-5f3f-5394-c09c-dffbe99c357a",
    "NServiceBus.ProcessingStarted": "2020-11-02 08:07:44:650218 Z",
    "NServiceBus.ProcessingEnded": "2020-11-02 08:07:44:837731 Z",
}
REMOVED = {
    "NServiceBus.Retries.Timestamp": "2020-10-31 13:56:55:359877 Z",
    "NServiceBus.ExceptionInfo.Data.Message type": "PowerSupplyPurchaseOrderService.ApiModels.Events.v1_0.PowerSupplyDebtorBlacklistCheckCompleted",
    "NServiceBus.ExceptionInfo.Data.Handler type": "Crm.PowerSupplySalesOrderManager.MessageHandlers.DebtorBlacklistCheckCompletedHandler",
    "NServiceBus.ExceptionInfo.Data.Handler start time": "31-10-2020 13:59:28",
    "NServiceBus.ExceptionInfo.Data.Handler failure time": "31-10-2020 13:59:28",
    "NServiceBus.ExceptionInfo.Data.Message ID": "caf68027-acce-4260-8442-ac6500e46afc",
    "NServiceBus.ExceptionInfo.Data.Transport message ID": "320fb8cb-ad20-48e9-a111-454ebe43a7a8",
    "NServiceBus.ExceptionInfo.Data.Custom Entry": "Custom",
}


def test_RemovesHeaders() -> None:
    headers: dict[str, str | None] = {**KEPT, **REMOVED}

    filtered = retry_headers(headers)

    assert filtered == KEPT
    assert list(filtered) == list(KEPT)


def test_the_other_failure_headers_go_too() -> None:
    headers: dict[str, str | None] = {
        "NServiceBus.FailedQ": "Sales",
        "NServiceBus.TimeOfFailure": "x",
        "NServiceBus.Retries": "3",
        "ServiceControl.EditOf": "y",
        "NServiceBus.ExceptionInfo.Message": "z",
        "NServiceBus.ExceptionInfoX": "kept: not the prefix",
    }

    assert retry_headers(headers) == {"NServiceBus.ExceptionInfoX": "kept: not the prefix"}


def test_a_deterministic_guid_is_the_md5_read_as_a_dotnet_guid() -> None:
    """MD5("") = d41d8cd98f00b204e9800998ecf8427e; ``new Guid(bytes)`` reads the first three
    fields little-endian."""
    assert str(make_id("")) == "d98c1dd4-008f-04b2-e980-0998ecf8427e"
    assert make_id("message-id", "Sales") == make_id("message-idSales")


def test_the_unique_id_of_a_failed_message() -> None:
    assert unique_message_id({"ServiceControl.Retry.UniqueMessageId": "kept"}) == "kept"
    by_endpoint = {"NServiceBus.MessageId": "m", "NServiceBus.ProcessingEndpoint": "Sales"}
    assert unique_message_id(by_endpoint) == str(make_id("m", "Sales"))
    by_failed_queue = {"NServiceBus.MessageId": "m", "NServiceBus.FailedQ": "Sales@MACHINE"}
    assert unique_message_id(by_failed_queue) == str(make_id("m", "Sales"))
