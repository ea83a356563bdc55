"""Queues as the transport names, finds and creates them, and SQS as boto3 hands it over:
message shapes and the errors the transport tells apart."""
