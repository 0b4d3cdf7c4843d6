"""How a person runs this wp-agent again, for the commands it prints (`wp-agent approve …` from the
CLI and from `wp-agent mcp`): `wp-agent` when that name on PATH is this very program, else the path
that is."""

from __future__ import annotations

import functools
import shlex
import shutil
import sys
from pathlib import Path

NAME = "wp-agent"


@functools.cache
def command_name() -> str:
    script = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if script is not None and script.name == NAME and script.exists():
        candidate = script.absolute()
    else:  # `python -m wp_agent.cli.main`: the console script of this interpreter's environment
        candidate = Path(sys.executable).parent / NAME
        if not candidate.exists():
            return f"{shlex.quote(sys.executable)} -m wp_agent.cli.main"
    on_path = shutil.which(NAME)
    if on_path is not None and Path(on_path).resolve() == candidate.resolve():
        return NAME
    return shlex.quote(str(candidate))
