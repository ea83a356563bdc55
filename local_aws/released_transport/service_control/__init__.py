"""ServiceControl 6.19.2's three instances on SQS: the main instance (its error side and its own
queue), the audit instance and the monitoring instance, what they share, the plugins' messages as
they read them, and what they saw per endpoint."""
