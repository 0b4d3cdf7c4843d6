"""The `wp-agent` command line: check, ask, publish, targets."""
