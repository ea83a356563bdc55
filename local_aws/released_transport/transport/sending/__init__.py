"""Sending (upstream ``Sending/``): the dispatcher, the prepared SQS and SNS requests and their
batches, and the hybrid de-duplication of the compatibility mode."""
