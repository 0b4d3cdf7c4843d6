"""Adapters behind the agent's ports: local files here, AWS services in `adapters.aws`."""
