"""Guarded code changes: a change of the site's code is checked on the site, and taken back by itself when
the site got worse.

The changes that break WordPress sites most are changes of code. A command that activates, deactivates,
installs, updates or deletes a plugin or a theme (only ever run after the person's approval: the policy
holds them) runs here as:

  health baseline (executors/site_health.py) → what is needed to go back (code_guard.php on the server:
  the named plugins' and themes' files copied to a private directory outside the web root, which were
  active, the theme) → the change → health probe → when the probe got worse: everything put back exactly
  (files, active plugins, theme) and the site probed again → one truthful report, in Japanese, with the
  command's own output.

A change the site survives is kept (its backup removed). A change taken back ends as failed (exit code 1)
with the reason, so the run and its records say it did not stick. The guard never runs for anything
else; which commands reach an executor is the policy's decision.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wp_agent.command_line.aliases import canonical_argv
from wp_agent.command_line.code_changes import CODE_CHANGES, LANGUAGE_CHANGES
from wp_agent.command_line.parsed_command import ParsedCommand
from wp_agent.executors.media_staging import FileStager, json_answer, run_staged_script
from wp_agent.executors.port import CommandResult, WpCli
from wp_agent.executors.site_health import HealthReport, compare, probe

GUARD = Path(__file__).with_name("code_guard.php")
# Where the probe's requests go: None, the site's own URL (a real server); else an address serving it.
Connect = Callable[[], AbstractContextManager[str | None]]


def fixed(connect: str | None) -> Connect:
    """Every probe's requests to `connect` (tests: the site over loopback HTTP), or the site's own URL."""

    @contextmanager
    def at() -> Iterator[str | None]:
        yield connect

    return at


@dataclass(frozen=True)
class Guarded:
    """What a guarded change touches: its kind and path, the named extensions, all plugins, or core."""

    path: tuple[str, ...]
    names: tuple[str, ...]
    all_plugins: bool
    core: dict[str, Any] | None = None  # a core update: {"minor": bool, "version": str | None}
    # The command's `--url=` (a site of a network): the guard's own reads and writes and the probe go
    # there too — its active plugins and theme are that site's, and so are the pages that may break.
    site: tuple[str, ...] = ()

    @classmethod
    def of(cls, argv: Sequence[str]) -> Guarded | None:
        parsed = ParsedCommand.from_argv(canonical_argv(tuple(argv)))
        path = next((parsed.positionals[:n] for n in (3, 2) if parsed.positionals[:n] in CODE_CHANGES), None)
        if path is None:  # (the words after the path name the plugins or themes)
            return None
        site = parsed.url_tokens()
        if path in LANGUAGE_CHANGES:
            return cls(path, (), False, site=site)
        if path == ("core", "update"):
            versions = parsed.option_values("version")
            core = {"minor": parsed.has_flag("minor"), "version": versions[-1] if versions else None}
            return cls(path, (), False, core, site)
        names = tuple(parsed.args_after(path))
        return cls(path, names, path[0] == "plugin" and (parsed.has_flag("all") or not names), site=site)

    @property
    def fresh(self) -> tuple[str, ...]:
        """The code the change replaced, whose cached copies the web server must forget."""
        return ({"plugin": "plugins", "theme": "themes", "core": "core"}.get(self.path[0], "languages"),)

    def request(self) -> dict[str, Any]:
        if self.core is not None:
            return {"op": "snapshot", "core": self.core}
        if self.path in LANGUAGE_CHANGES:  # every translation file and the site's language
            return {"op": "snapshot", "languages": True}
        kind = "plugins" if self.path[0] == "plugin" else "themes"
        # a theme switch also needs the theme that was active: the options record it
        return {"op": "snapshot", kind: list(self.names), "all_plugins": self.all_plugins}


class GuardedWpCli:
    """A WpCli whose code changes are guarded (the rest passes through untouched)."""

    def __init__(self, inner: WpCli, stager: FileStager, *, connect: Connect | None = None) -> None:
        self._inner = inner
        self._stager = stager
        self._connect = connect or fixed(None)  # the site's own URL

    def run(self, argv: Sequence[str]) -> CommandResult:
        change = Guarded.of(argv)
        if change is None:
            return self._inner.run(argv)
        with self._connect() as connect:
            each = self._one_by_one(argv, change)
            if each is None:
                return self._guarded(argv, change, connect)[0]
            # Updating all: one guarded update per plugin or theme, so one that breaks the site is
            # taken back alone and the others are kept (the same updates as the command, no other).
            return _combined([self._guarded(one, Guarded.of(one) or change, connect) for one in each])

    @property
    def inner(self) -> WpCli:
        return self._inner

    def close(self) -> None:
        self._inner.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    # -- the guard ---------------------------------------------------------------------------------

    def _one_by_one(self, argv: Sequence[str], change: Guarded) -> list[list[str]] | None:
        """`plugin|theme update --all`: the same update of each plugin or theme WordPress offers one for
        (less those `--exclude` names), as its own command; None for any other change."""
        parsed = ParsedCommand.from_argv(canonical_argv(tuple(argv)))
        if change.path[1] != "update" or change.core is not None or not parsed.has_flag("all"):
            return None
        kind = change.path[0]
        offered = self._inner.run([kind, "list", "--update=available", "--field=name", *parsed.url_tokens()])
        if offered.exit_code != 0:
            return None  # WP-CLI says why when the command itself runs
        excluded = {name for value in parsed.option_values("exclude") for name in value.split(",")}
        flags = [o.token for o in parsed.options if o.name not in {"all", "exclude"}]
        names = [name for name in offered.stdout.split() if name not in excluded]
        if any(name.startswith("-") for name in names):
            return None  # a name the site gives, read as an option: the command runs as asked, whole
        return [[kind, "update", name, *flags] for name in names] or None

    def _guarded(
        self, argv: Sequence[str], change: Guarded, connect: str | None
    ) -> tuple[CommandResult, bool]:
        """The change run guarded, and whether it was taken back."""
        site = change.site

        def look(since: HealthReport | None = None) -> HealthReport:
            """The probe on the change's site; after the change: its new log lines, the changed code
            fresh, the addresses as they were before."""
            if since is None:
                return probe(self._inner, self._stager, connect=connect, site=site)
            return probe(self._inner, self._stager, connect=connect, site=site, log_from=since.log_size,
                         fresh=change.fresh, address=before.address)  # fmt: skip

        before = look()
        snapshot = self.on_server(change.request(), *site)
        if "backup" not in snapshot:
            return _refused("変更前の状態を保存できなかったため、変更を実行しませんでした。", snapshot), False
        backup = snapshot["backup"]
        result = self._inner.run(argv)
        if change.core is not None:  # (WP-CLI may end in an error after it replaced the files)
            result = self._update_database(result, snapshot["state"])
        after = look(before)
        verdict = compare(before, after)
        if not verdict.got_worse:
            self.on_server({"op": "discard", "backup": backup}, *site)
            report = ["変更後にサイトを確認しました: " + verdict.text_ja(), *_lines(after)]
            return _with_report(result, report), False
        # Back: the files first, without loading WordPress (the change may keep it from loading at
        # all), then the database and the active plugins and theme, without loading any of them.
        files = self.on_server({"op": "restore_files", "backup": backup}, "--skip-wordpress")
        state = self.on_server(
            {"op": "restore_state", "backup": backup}, "--skip-plugins", "--skip-themes", *site
        )
        again = look(after)
        back = "restored" in files and "restored" in state
        if back:
            self.on_server({"op": "discard", "backup": backup}, *site)
        fine = back and not compare(before, again).got_worse
        every_table = set(snapshot["state"].get("db", {}).get("copies") or {}) >= set(
            snapshot["state"].get("db", {}).get("tables") or []
        )
        what = f"ファイル・{'データベース' if every_table else 'サイトの設定'}・有効なプラグイン・テーマ"
        version = f"（WordPress {snapshot['state']['core']['version']}）" if change.core else ""
        report = [
            f"{verdict.text_ja()}そのため変更前の状態{version}（{what}）に戻しました。"
            + (
                "サイトは変更前と同じく動いています。"
                if fine
                else "戻した後もサイトに問題が残っています。確認してください。"
                if back
                else f"戻す作業の一部が失敗しました。変更前の状態はサーバーの {backup} に残しています。"
            ),
            "変更直後の確認:",
            *_lines(after),
            "戻した後の確認:",
            *_lines(again),
        ]
        taken_back = CommandResult(
            result.stdout, _text([*report, result.stderr]), 1, result.duration_ms, rolled_back=True
        )
        return taken_back, True

    def _update_database(self, result: CommandResult, state: dict[str, Any]) -> CommandResult:
        """A core update's database step, inside the guard (WordPress would run it on the next admin
        visit): `core update-db`, for every site of a network."""
        network = ["--network"] if state.get("multisite") else []
        done = self._inner.run(["core", "update-db", *network])
        return CommandResult(
            _text([result.stdout, done.stdout]),
            _text([result.stderr, done.stderr]),
            result.exit_code or done.exit_code,
            result.duration_ms + done.duration_ms,
        )

    def on_server(self, request: dict[str, Any], *flags: str) -> dict[str, Any]:
        """code_guard.php's answer to `request` (snapshot, restore_files, restore_state, discard) on the
        site's server; `flags` for `wp eval-file` (--skip-wordpress …)."""
        ran = run_staged_script(self._inner, self._stager, GUARD, request, flags)
        answer = json_answer(ran)
        if not answer:  # (it never ran: WordPress could not load, the database is down…) — WP-CLI says why
            said = [line for line in (ran.stderr or ran.stdout).splitlines() if line.strip()]
            answer = {"error": said[0].strip()[:200] if said else f"終了コード {ran.exit_code}"}
        return answer


def _combined(outcomes: list[tuple[CommandResult, bool]]) -> CommandResult:
    """One answer for the updates of `--all`: each one's output and report, failed when any was taken
    back or failed by itself (what was kept is kept)."""
    results = [result for result, _ in outcomes]
    taken_back = sum(1 for _, back in outcomes if back)
    failed = sum(1 for result, back in outcomes if result.exit_code != 0 and not back)
    said = [f"{taken_back}件はサイトが悪くなったため戻しました"] if taken_back else []
    said += [f"{failed}件は更新できませんでした"] if failed else []
    summary = f"{len(results)}件を1件ずつ確認しながら更新しました" + (
        f"（{'、'.join(said)}）。" if said else "。"
    )
    return CommandResult(
        _text([*(r.stdout for r in results), summary]),
        _text(r.stderr for r in results),
        1 if taken_back or failed else 0,
        sum(r.duration_ms for r in results),
        rolled_back=taken_back > 0,
    )


def unguarded(wp_cli: WpCli) -> WpCli:
    """The executor a guard wraps (itself when it is none): what checks of the executor's kind look at."""
    return wp_cli.inner if isinstance(wp_cli, GuardedWpCli) else wp_cli


def _lines(report: HealthReport) -> list[str]:
    return [f"  {line}" for line in report.lines_ja()]


def _with_report(result: CommandResult, report: list[str]) -> CommandResult:
    return CommandResult(_text([result.stdout, *report]), result.stderr, result.exit_code, result.duration_ms)


def _text(parts: Iterable[str]) -> str:
    """Outputs and report lines as one text ending in a newline (empty when there is nothing)."""
    text = "\n".join(part.rstrip() for part in parts if part.strip()).strip()
    return f"{text}\n" if text else ""


def _refused(message_ja: str, answer: dict[str, Any]) -> CommandResult:
    why = str(answer.get("error") or "")[:200]
    return CommandResult("", f"{message_ja}（{why}）\n" if why else f"{message_ja}\n", 1, 0)
