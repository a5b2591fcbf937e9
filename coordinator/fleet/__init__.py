"""`quadfleet fleet`: the spot fleet's stack, queues, status, template and cost model."""
