"""Testing kit for ACP agents: a mock client, state reconstruction and conformance checks."""
