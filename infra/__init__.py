"""infra/: the CloudFormation template of the fleet (fleet.yaml), shipped as package data for `quadfleet fleet`."""
