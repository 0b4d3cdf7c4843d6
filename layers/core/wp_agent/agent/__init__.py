"""The agent: one turn = one model call + the tool calls it asked for; a runner loops turns locally."""
