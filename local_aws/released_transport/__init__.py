"""An executable model of the *released* NServiceBus SQS transport with the platform's plugins,
of ServiceControl's three instances on SQS, and of the seed's ARN-aware ("New") endpoint — the
peers users actually run.

Built from the facts of NServiceBus.AmazonSQS 9.1.1 with NServiceBus core 10.2.5, the 6.0.1
plugins (Heartbeat, CustomChecks, Metrics with Metrics.ServiceControl, SagaAudit) and
ServiceControl 6.19.2 (each module cites the upstream file its behaviour comes from), not from
this project's runtime: nothing here imports ``cross_account_runtime``, ``constructs_lib`` or
``stacks``, so the model can judge them. ``docs/released_transport.md`` says what is modelled
and what is not.

Entry points: :class:`~local_aws.released_transport.endpoint.ReleasedEndpoint`,
:class:`~local_aws.released_transport.service_control.ServiceControl` (the main instance),
:class:`~local_aws.released_transport.service_control_audit.ServiceControlAudit`,
:class:`~local_aws.released_transport.service_control_monitoring.ServiceControlMonitoring`,
:func:`~local_aws.released_transport.service_control_view.endpoint_views` and
:class:`~local_aws.released_transport.arn_aware.ArnAwareEndpoint`.
"""
