"""An executable model of the *released* NServiceBus SQS transport with the platform's plugins,
of ServiceControl's three instances on SQS, and of the seed's ARN-aware ("New") endpoint — the
peers users actually run.

Built from the facts of NServiceBus.AmazonSQS 9.1.1 with NServiceBus core 10.2.5, the 6.0.1
plugins (Heartbeat, CustomChecks, Metrics with Metrics.ServiceControl, SagaAudit) and
ServiceControl 6.19.2 (each module cites the upstream file its behaviour comes from), not from
this project's runtime: nothing here imports ``cross_account_runtime``, ``constructs_lib`` or
``stacks``, so the model can judge them. ``docs/released_transport.md`` says what is modelled
and what is not.

One package per product, each importing only those before it: ``dotnet`` (the .NET rules),
``core`` (NServiceBus core), ``transport`` (NServiceBus.AmazonSQS), ``plugins`` (the platform's
plugins), ``endpoint`` (an endpoint composed of them), ``service_control`` (ServiceControl's
instances) and ``arn_aware`` (the seed's endpoint); ``headers`` names every header once, for all.

Entry points: :class:`~local_aws.released_transport.endpoint.released_endpoint.ReleasedEndpoint`,
:class:`~local_aws.released_transport.service_control.main_instance.ServiceControl` (the main
instance), :class:`~local_aws.released_transport.service_control.audit.ServiceControlAudit`,
:class:`~local_aws.released_transport.service_control.monitoring.ServiceControlMonitoring`,
:func:`~local_aws.released_transport.service_control.view.endpoint_views` and
:class:`~local_aws.released_transport.arn_aware.endpoint.ArnAwareEndpoint`.
"""
