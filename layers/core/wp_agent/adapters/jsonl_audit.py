"""AuditLog for local runs: one JSON object per line, appended (spec §10.1 audit log to a file)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from wp_agent.agent.audit_events import AuditEvent


class JsonlAuditLog:
    def __init__(self, path: Path) -> None:
        self._path = path
        self._lock = threading.Lock()
        self._written: set[str] = set()  # a record delivered again by this process is written once

    def append(self, event: AuditEvent) -> None:
        line = event.model_dump_json(exclude_none=True) + "\n"
        with self._lock:
            if event.record_id in self._written:
                return
            self._path.parent.mkdir(parents=True, exist_ok=True)
            # O_APPEND keeps concurrent writers from interleaving inside a line.
            fd = os.open(self._path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            try:
                os.write(fd, line.encode("utf-8"))
            finally:
                os.close(fd)
            self._written.add(event.record_id)
