"""`wp-agent eval`: Japanese tasks (eval/tasks) run through the real agent on the sandbox and scored on
the site's final state (τ²-bench style, pass^k), with seed 002's metrics; recordings replay runs."""
