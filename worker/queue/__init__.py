"""The fleet worker: an SQS message's lifecycle (receive, heartbeat, extract, commit, acknowledge), the supervisor of
worker processes, spot notices and the Auto Scaling group."""
