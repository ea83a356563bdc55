"""The seed's ARN-aware ("New") endpoint: the released endpoint plus the
``NServiceBus.Transport.Sqs.ARN`` header, which no release implements."""
