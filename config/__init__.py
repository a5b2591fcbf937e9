"""The default configuration (``quadfleet.toml``), shipped as package data."""
