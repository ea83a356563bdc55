"""A released endpoint: NServiceBus core, the SQS transport and the platform's plugins composed
as NServiceBus 10 hosts them, for tests to drive step by step
(:class:`~local_aws.released_transport.endpoint.released_endpoint.ReleasedEndpoint`)."""
