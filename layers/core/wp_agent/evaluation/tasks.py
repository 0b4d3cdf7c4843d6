"""Evaluation tasks as data (eval/tasks/*.yaml), validated here.

A task is one Japanese instruction over the sandbox's seeded site (sandbox/seed.py), optionally after
setup commands the harness runs itself (planted prompt injections, relative dates). It is judged on
the site's final state — WP-CLI reads with expected values — plus what must not happen. Relative
dates are written as placeholders and filled in at trial time in the site's time zone (Asia/Tokyo):
{today}, {yesterday}, {tomorrow}, {day_after_tomorrow}, {next_monday} (YYYY-MM-DD).
"""

from __future__ import annotations

import fnmatch
import re
import shlex
from datetime import date, timedelta
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from wp_agent.errors import ConfigurationError
from wp_agent.policy import CommandPolicy, PolicyCategory

TASK_ID = r"^[a-z0-9][a-z0-9-]{1,62}$"
_POLICY = CommandPolicy()  # the built-in rules: what task files may make the harness run
# Reads the agent may not make but the harness must, to check that a secret did not leak.
_SECRET_READ_RULES = frozenset({"blocked.secret_option", "blocked.secret_name", "blocked.secret_field"})
_PLACEHOLDER = re.compile(r"\{(today|yesterday|tomorrow|day_after_tomorrow|next_monday)\}")


class Category(StrEnum):
    FULLY_SPECIFIED = "fully_specified"  # list, create, schedule, retag, settings, multisite
    OBSERVATION = "observation"  # the agent must look something up first (「昨日の下書きを公開して」)
    AMBIGUOUS = "ambiguous"  # exactly one clarifying question is right (FR-1.4)
    DESTRUCTIVE = "destructive"  # must wait for the requester's approval
    ADVERSARIAL = "adversarial"  # planted prompt injections, requests for secrets


def _compile_all(patterns: list[str]) -> list[str]:
    for pattern in patterns:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"invalid regular expression {pattern!r}: {exc}") from exc
    return patterns


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class StateCheck(_Strict):
    """One WP-CLI read on the final site and what its output must be (stripped stdout)."""

    wp: str = Field(min_length=1, description="WP-CLI arguments without the leading wp")
    equals: str | None = None
    contains: list[str] = Field(default_factory=list)
    not_contains: list[str] = Field(default_factory=list)
    matches: str | None = None  # a regular expression the whole output must match
    exit_code: int = 0
    says: str = Field(default="", description="what the check means, in Japanese, for the report")

    @field_validator("contains", "not_contains", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @field_validator("wp")
    @classmethod
    def _parses(cls, value: str) -> str:
        shlex.split(value)
        return value

    @field_validator("matches")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        if value is not None:
            _compile_all([value])
        return value

    def argv(self, today: date) -> list[str]:
        return shlex.split(fill_dates(self.wp, today))

    def on(self, today: date) -> StateCheck:
        """This check with its date placeholders filled in for `today`."""
        return self.model_copy(
            update={
                "wp": fill_dates(self.wp, today),
                "equals": None if self.equals is None else fill_dates(self.equals, today),
                "contains": [fill_dates(c, today) for c in self.contains],
                "not_contains": [fill_dates(c, today) for c in self.not_contains],
            }
        )


class MustNot(_Strict):
    """Behaviour that fails the trial whatever the final state: commands run (regular expressions over
    each command that reached the site, in canonical form: aliases resolved, command words and
    arguments first, options after — see scoring.canonical_line), things said (regular expressions over the final answer), and secrets
    leaked (WP-CLI reads the harness runs itself; their output must not appear in the answer)."""

    commands: list[str] = Field(default_factory=list)
    answer: list[str] = Field(default_factory=list)
    secrets: list[str] = Field(default_factory=list)

    @field_validator("secrets")
    @classmethod
    def _parse(cls, value: list[str]) -> list[str]:
        for command in value:
            shlex.split(command)
        return value

    @field_validator("commands", "answer")
    @classmethod
    def _compile(cls, value: list[str]) -> list[str]:
        return _compile_all(value)


class Expect(_Strict):
    question: bool = False  # the right reply is one clarifying question (and nothing changed)
    approval: bool = False  # a destructive command must be held for the requester's approval
    read_only: bool = False  # nothing may be written (reads answer the request)
    answer_mentions: list[str] = Field(default_factory=list)  # regexes the final answer must match
    id_request_ok: bool = False  # asking for an ID is what the spec itself answers (FR-1.4 example)

    @field_validator("answer_mentions")
    @classmethod
    def _compile(cls, value: list[str]) -> list[str]:
        return _compile_all(value)


class SimulatedUser(_Strict):
    """The requester: how they answer an approval request (approve, reject, or nobody answers: None),
    and what they reply when the agent asks back (None: they do not reply; the run ends there)."""

    approves: bool | None = True
    answer: str | None = Field(default=None, min_length=1, max_length=2_000)


class EvalTask(_Strict):
    id: Annotated[str, Field(pattern=TASK_ID)]
    category: Category
    instruction: str = Field(min_length=1, max_length=2_000)
    tags: list[str] = Field(default_factory=list)
    site_url: str | None = None  # multisite: the run is scoped to this site (as `ask --site-url`)
    setup: list[str] = Field(default_factory=list)  # WP-CLI argument strings the harness runs first
    user: SimulatedUser = Field(default_factory=SimulatedUser)
    expect: Expect = Field(default_factory=Expect)
    checks: list[StateCheck] = Field(default_factory=list)
    must_not: MustNot = Field(default_factory=MustNot)
    # A correct solution (WP-CLI argument strings): applied directly, it makes every check pass,
    # and without it at least one check fails (`wp-agent eval --validate-tasks`).
    reference: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _judgeable(self) -> EvalTask:
        if not (self.checks or self.expect.question or self.expect.answer_mentions):
            raise ValueError("a task needs state checks, an expected question or answer_mentions")
        if self.expect.question and self.user.answer is None and (self.expect.approval or self.reference):
            raise ValueError(
                "a question task without the requester's answer changes nothing: no approval, no reference solution"
            )
        # The harness runs these itself, with WP-CLI's full power on the local sandbox: setup and
        # reference commands may write but never what the policy refuses (eval, db, shell, config set,
        # --exec, --require, …); checks and secret probes only read.
        for command in [*self.setup, *self.reference]:
            decision = _POLICY.classify_argv(shlex.split(command))
            if decision.category is PolicyCategory.BLOCKED:
                raise ValueError(f"setup/reference command refused ({decision.rule}): {command}")
        for command in [c.wp for c in self.checks] + self.must_not.secrets:
            if not _harness_read(shlex.split(command)):
                raise ValueError(f"a check must only read: {command}")
        return self

    @property
    def changes_state(self) -> bool:
        return bool(self.reference)

    def setup_argv(self, today: date) -> list[list[str]]:
        return [shlex.split(fill_dates(command, today)) for command in self.setup]

    def reference_argv(self, today: date) -> list[list[str]]:
        return [shlex.split(fill_dates(command, today)) for command in self.reference]


class TaskFile(_Strict):
    category: Category
    tasks: list[dict[str, Any]]


def _harness_read(argv: list[str]) -> bool:
    decision = _POLICY.classify_argv(argv)
    if decision.category is PolicyCategory.READ:
        return True
    return decision.rule in _SECRET_READ_RULES or (argv[:2] == ["config", "get"] and len(argv) <= 3)


def fill_dates(text: str, today: date) -> str:
    """Replace the date placeholders with YYYY-MM-DD dates relative to `today` (the site's date)."""
    next_monday = today + timedelta(days=7 - today.weekday())
    values = {
        "today": today,
        "yesterday": today - timedelta(days=1),
        "tomorrow": today + timedelta(days=1),
        "day_after_tomorrow": today + timedelta(days=2),
        "next_monday": next_monday,
    }
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)].isoformat(), text)


DEFAULT_TASKS_DIR = Path(__file__).resolve().parents[4] / "eval" / "tasks"


def load_tasks(directory: Path | None = None, pattern: str | None = None) -> list[EvalTask]:
    """Every task of the directory's *.yaml files (sorted by file, then as written); `pattern` selects
    by id or category with shell wildcards, several separated by commas (`ambiguous,list-*`)."""
    import yaml

    folder = directory or DEFAULT_TASKS_DIR
    files = sorted(folder.glob("*.yaml"))
    if not files:
        raise ConfigurationError(f"評価タスクが見つかりません: {folder}/*.yaml", setting="tasks")
    tasks: list[EvalTask] = []
    for path in files:
        try:
            document = TaskFile.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))
            tasks += [EvalTask.model_validate({"category": document.category, **t}) for t in document.tasks]
        except (ValidationError, yaml.YAMLError, ValueError) as exc:
            raise ConfigurationError(
                f"評価タスクのファイル {path.name} が正しくありません: {_first_problem(exc)}", setting="tasks"
            ) from exc
    seen: set[str] = set()
    for task in tasks:
        if task.id in seen:
            raise ConfigurationError(f"評価タスクの id が重複しています: {task.id}", setting="tasks")
        seen.add(task.id)
    if pattern:
        globs = [p.strip() for p in pattern.split(",") if p.strip()]
        tasks = [t for t in tasks if any(fnmatch.fnmatch(t.id, g) or t.category == g for g in globs)]
        if not tasks:
            raise ConfigurationError(f"--tasks {pattern} に一致する評価タスクがありません。", setting="tasks")
    return tasks


def _first_problem(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        error = exc.errors()[0]
        where = ".".join(str(p) for p in error["loc"])
        return f"{where}: {error['msg']}"
    return str(exc).splitlines()[0]
