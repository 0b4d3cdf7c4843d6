"""The CLI's store of finished runs, for `wp-agent undo <runId>`: one JSON file per run (0600) next
to the audit file, holding the run's command records with their masked before/after images."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from wp_agent.agent.session_state import CommandRecord, SessionState
from wp_agent.config import LocalSettings
from wp_agent.masking import mask_argv
from wp_agent.whole_values import whole

_RUN_ID = whole(r"run_[0-9a-f]{20}", "run_0123456789abcdef0123")


class StoredRun(BaseModel):
    model_config = ConfigDict(extra="forbid")

    session_id: str
    run_id: str
    user_id: str
    target_id: str
    site_url: str | None = None
    network_admin: bool = False
    commands: list[CommandRecord] = Field(default_factory=list)
    reverted_by: list[str] = Field(default_factory=list)  # run IDs of undo runs
    undone_by: str | None = None  # the undo run that put back everything it planned


def valid_run_id(run_id: str) -> bool:
    return _RUN_ID.fits(run_id)


class LocalRunStore:
    def __init__(self, directory: Path) -> None:
        self.directory = directory

    @classmethod
    def from_settings(cls, settings: LocalSettings) -> LocalRunStore:
        return cls(settings.wp_agent_audit_file.expanduser().parent / "runs")

    def save_run(self, state: SessionState) -> StoredRun:
        """The state's current run; argv masked (a record never holds a secret the command carried)."""
        commands = [r.model_copy(update={"argv": mask_argv(r.argv)}) for r in state.run_commands()]
        run = StoredRun(
            session_id=state.session_id, run_id=state.run_id, user_id=state.user_id,
            target_id=state.target_id, site_url=state.site_url, network_admin=state.network_admin,
            commands=commands,
        )  # fmt: skip
        self.save(run)
        return run

    def save(self, run: StoredRun) -> None:
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        # Written whole, then renamed: a crash never leaves half a record.
        fd, temporary = tempfile.mkstemp(dir=self.directory, prefix=".run-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(run.model_dump_json())
            os.replace(temporary, self.directory / f"{run.run_id}.json")
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise

    def load(self, run_id: str) -> StoredRun | None:
        if not valid_run_id(run_id):
            return None
        path = self.directory / f"{run_id}.json"
        if not path.is_file():
            return None
        return StoredRun.model_validate_json(path.read_text(encoding="utf-8"))
