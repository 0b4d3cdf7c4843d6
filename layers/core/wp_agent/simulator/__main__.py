"""`python -m wp_agent.simulator <wp-cli args>`."""

from wp_agent.simulator.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
