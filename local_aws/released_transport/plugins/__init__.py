"""The platform's plugins, 6.0.1: NServiceBus.Heartbeat, .CustomChecks, .Metrics with
.Metrics.ServiceControl and .SagaAudit, and what they share (a message handed to the transport's
dispatcher directly)."""
