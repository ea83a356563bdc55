"""NServiceBus core 10.2.5 as an SQS endpoint runs it: who the endpoint is, the transport seam
(what core hands the transport to send, what the transport hands core from a receive), the
headers its pipeline stages put on messages, auditing, recoverability and the message-driven
side of the compatibility mode.

Core is below the transport, as upstream the transport package builds on core: nothing here
imports :mod:`local_aws.released_transport.transport`.
"""
