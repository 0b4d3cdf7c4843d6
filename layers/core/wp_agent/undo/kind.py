"""What every kind of changed thing is made of (see entities.py): how it is read, how its absence
shows, and the shared helpers its restore steps are built with."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from wp_agent.executors.port import CommandResult
from wp_agent.models.undo import EntityRef, PlanStep

# Runs one read-only argv on the site (scoped like the command); raises CaptureError when the read
# was refused or the site could not be reached. A non-zero exit is returned, not raised.
Read = Callable[[list[str]], CommandResult]


class CaptureError(Exception):
    """A before/after image could not be read; the command is then marked not revertible."""

    def __init__(self, reason_ja: str) -> None:
        super().__init__(reason_ja)
        self.reason_ja = reason_ja


# Which sections of a thing's image to read (EntityRef.parts); None: all of it.
Parts = Sequence[str] | None


@dataclass(frozen=True)
class Kind:
    name: str
    # The reads for the parts asked for, and the image made from their results (in that order).
    # Kinds without sections ignore `parts`.
    reads: Callable[[list[str], Parts], list[list[str]]]
    parse: Callable[[list[str], Parts, list[CommandResult]], Any]
    restore: Callable[[list[str], Any, Any], list[PlanStep]]
    label: Callable[[list[str]], str]
    # stderr of the first read when the thing does not exist (real WP-CLI 2.10 messages)
    missing: re.Pattern[str] | None = None
    # The image is a dict of sections ("fields", "meta", "terms"…) that can be read one by one: a
    # command reads only the sections it changes (see sections.py for how images of parts combine).
    sectioned: bool = False


def json_of(result: CommandResult, what: str) -> Any:
    if not result.ok:
        raise CaptureError(f"{what}を読み取れませんでした（{first_line(result.stderr)}）")
    try:
        return json.loads(result.stdout or "null")
    except ValueError:
        raise CaptureError(f"{what}の読み取り結果を解釈できませんでした") from None


def first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")[:200]


def absent(kind: Kind, results: list[CommandResult]) -> bool:
    first = results[0]
    return not first.ok and kind.missing is not None and bool(kind.missing.search(first.stderr))


def value_args(value: Any) -> list[str]:
    """A stored value as WP-CLI takes it: text as it is, anything else as JSON with --format=json. Text
    that starts with `-` goes as JSON too: WP-CLI would read a word `--all` as an option (it has no `--`)."""
    if isinstance(value, str) and not value.startswith("-"):
        return [value]
    return [json.dumps(value, ensure_ascii=False), "--format=json"]


def name_arg(name: str, what: str) -> str:
    """A stored name (a meta key) as a word of a command: never one WP-CLI would read as an option."""
    if name.startswith("-"):
        raise CaptureError(f"{what}の名前「{name}」はコマンドの引数として渡せないため、元に戻せません。")
    return name


# The options table's autoload as WordPress stores it: before 6.6 yes/no; since, on/off, or auto,
# auto-on, auto-off where WordPress decided. What it does is one of two things (6.6's
# wp_autoload_values_to_autoload() loads these), and WP-CLI 2.10 can only say `--autoload=yes|no`:
# a before-image keeps the effect, so a theme switch that turned `auto` into `on` and back is restored.
_LOADED = frozenset({"yes", "on", "auto-on", "auto"})


def autoload_effect(stored: str) -> str:
    """`yes` when WordPress loads the option on every request, else `no`."""
    return "yes" if stored in _LOADED else "no"


def autoload_args(stored: str) -> list[str]:
    """The WP-CLI flag that gives an option the autoload effect it had."""
    return [f"--autoload={autoload_effect(stored)}"]


def step(argv: Sequence[str], restores_ja: str, *, optional: bool = False) -> PlanStep:
    return PlanStep(argv=list(argv), restores_ja=restores_ja, optional=optional)


def created_or_gone(before: Any, current: Any, delete: list[str], label: str) -> list[PlanStep] | None:
    """The steps when the run created or deleted the thing (None: it exists before and now).
    Created: delete it again. Deleted for good: it cannot be brought back."""
    if before is None and current is None:
        return []
    if before is None:
        return [step(delete, f"作成された{label}を削除")]
    if current is None:
        raise CaptureError(f"完全に削除された{label}は元に戻せません")
    return None


# -- meta of any object: {key: [values…]} --------------------------------------------------------


def meta_rows(rows: Any, what: str) -> dict[str, list[Any]]:
    if not isinstance(rows, list):
        raise CaptureError(f"{what}を解釈できませんでした")
    meta: dict[str, list[Any]] = {}
    for row in rows:
        meta.setdefault(str(row["meta_key"]), []).append(row["meta_value"])
    return meta


def meta_steps(
    obj: str, object_id: str, before: dict[str, list[Any]], current: dict[str, list[Any]], label: str
) -> list[PlanStep]:
    """Commands that make the object's meta equal `before` again (only keys that differ)."""
    steps: list[PlanStep] = []
    for key in sorted(set(before) | set(current)):
        was, now = before.get(key, []), current.get(key, [])
        if was == now:
            continue
        what = f"{label}のメタ「{key}」"
        name_arg(key, what)  # (a name WP-CLI would read as an option cannot be put back)
        if not was:
            # The key did not exist before the run: all it holds is the run's (checked when planned
            # and again right before the step), or WordPress's own side effect of an earlier step
            # of the undo (restoring a date records the undone one as `_wp_old_date`): all of it goes.
            # Optional: WordPress may already have removed it while restoring something else.
            steps.append(
                PlanStep(argv=[obj, "meta", "delete", object_id, key], optional=True,
                         restores_ja=f"{what}を削除（実行前はなし）", takes_back_addition=True)
            )  # fmt: skip
        elif len(was) == 1 and len(now) == 1:
            steps.append(
                step([obj, "meta", "update", object_id, key, *value_args(was[0])], f"{what}を元の値に戻す")
            )
        else:
            if now:
                steps.append(step([obj, "meta", "delete", object_id, key], f"{what}をいったん削除"))
            steps.extend(
                step([obj, "meta", "add", object_id, key, *value_args(v)], f"{what}を元の値で追加")
                for v in was
            )
    return steps


def scoped(argv: list[str], ref: EntityRef) -> list[str]:
    """The argv on the entity's site (`--url`) when it has one."""
    return [*argv, f"--url={ref.url}"] if ref.url else argv
