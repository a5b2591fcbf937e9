"""The work queue seen from outside: filling it (enqueue), creating it and redriving dead letters, a run's status."""
