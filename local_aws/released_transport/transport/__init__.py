"""NServiceBus.AmazonSQS 9.1.1, the released SQS transport, laid out as upstream lays it out:
queues and their names (``queues``), topics and native subscriptions (``pubsub``), sending
(``sending``) and receiving (``receiving``); the wrapped envelope and the S3 settings, which
both sides use, stand beside them."""
