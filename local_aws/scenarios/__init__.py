"""What the main job plays on the deployed local AWS: the NServiceBus peers of the topology
(:mod:`local_aws.scenarios.peers`), their conversations through the account bridge, a publish
to a topic, the Particular platform across accounts, and a day of delivery logs with its report."""
