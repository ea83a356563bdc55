"""What moto was taught, and its server process: the local AWS.

Each teaching is a module of its own (CloudFormation models moto lacks, SNS deliveries into the
queue's account, resource policies stored but not enforced, a bucket's configurations from
templates, FIFO queue delays as SQS applies them, time travel for SQS messages, a function's
deployed code for the Lambda poller); :mod:`local_aws.moto.main` is the server process that
applies them all, and :mod:`local_aws.moto.server` starts and stops it.
"""
