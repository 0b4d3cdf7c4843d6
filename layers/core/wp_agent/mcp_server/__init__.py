"""`wp-agent mcp`: the agent's guarded wp_cli tool for MCP clients (named so as not to shadow `mcp`)."""
