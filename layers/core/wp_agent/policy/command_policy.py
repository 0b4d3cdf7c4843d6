"""CommandPolicy: classify one model-produced command as read | write | destructive | blocked."""

from __future__ import annotations

import dataclasses
import logging
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from wp_agent.command_line.aliases import canonical_argv
from wp_agent.command_line.parsed_command import ParsedCommand
from wp_agent.command_line.shell_syntax import HazardKind, ShellHazard, find_shell_hazards, split_words
from wp_agent.config import PolicySettings
from wp_agent.errors import ConfigurationError
from wp_agent.masking import mask_argv, mask_text
from wp_agent.media.safe_download import parse_test_hosts
from wp_agent.policy import host_resolution
from wp_agent.policy.argument_rules import (
    MEDIA_PRIVATE_HOST_RULE,
    ArgumentRule,
    Verdict,
    read_only_flag,
    rules_for,
)
from wp_agent.policy.categories import PolicyCategory
from wp_agent.policy.command_grammar import Ambiguity, CommandReading, read_command
from wp_agent.policy.command_table import ALLOWED_COMMANDS, HARD_BLOCKS, CommandEntry, HardBlock
from wp_agent.policy.custom_rules import CustomRules, load_custom_rules
from wp_agent.policy.effects.table import fetched_host_names, site_checks
from wp_agent.policy.effects.values import SERVER_FETCH_RULE
from wp_agent.policy.fetches import hosts_fetched
from wp_agent.policy.global_flags import FORBIDDEN_GLOBALS
from wp_agent.policy.host_resolution import HostResolver, not_public
from wp_agent.policy.identifiers import (
    disguised_option,
    is_plain,
    non_plain_flag_name,
    non_plain_flag_verdict,
)
from wp_agent.policy.rule import strictest
from wp_agent.policy.source_rules import SERVER_FETCH_PRIVATE_RULE, server_fetched

__all__ = ["CommandPolicy", "PolicyCategory", "PolicyDecision"]

logger = logging.getLogger(__name__)

MAX_COMMAND_CHARS = 200_000
MAX_ARGUMENTS = 200

_OPERATOR_MEANING_JA = {
    ";": "コマンド連結（セミコロン）",
    "&&": "コマンド連結（AND）",
    "||": "コマンド連結（OR）",
    "|": "パイプ",
    "&": "バックグラウンド実行",
    ">": "ファイル上書き",
    ">>": "ファイル追記",
    "<": "入力リダイレクト",
    "<<": "ヒアドキュメント",
    "(": "サブシェル",
    ")": "サブシェル",
}
# Commands the spec names that real WP-CLI does not have; the reason tells the model what to use.
_REAL_WP_CLI_HINTS: dict[tuple[str, ...], str] = {
    (
        "page",
    ): "WP-CLIに page コマンドはありません。固定ページは post list --post_type=page のように post コマンドで操作してください",
    (
        "media",
        "list",
    ): "WP-CLIに media list はありません。メディアは post list --post_type=attachment で一覧できます",
    (
        "media",
        "delete",
    ): "WP-CLIに media delete はありません。メディアの削除は post delete <ID> です（承認が必要）",
}
_HAZARD_RULES: dict[HazardKind, str] = {
    HazardKind.OPERATOR: "blocked.shell_operator",
    HazardKind.SUBSTITUTION: "blocked.command_substitution",
    HazardKind.NEWLINE: "blocked.newline",
    HazardKind.CONTROL_CHARACTER: "blocked.control_character",
    HazardKind.ESCAPED_OPERATOR: "blocked.shell_operator",
    HazardKind.UNBALANCED_QUOTE: "blocked.unbalanced_quote",
}


@dataclass(frozen=True)
class PolicyDecision:
    """What the policy decided for one command; `argv` excludes the leading `wp`."""

    command: str
    category: PolicyCategory
    argv: tuple[str, ...]
    reason_ja: str
    rule: str
    pattern: str | None = None
    command_path: tuple[str, ...] = ()
    label_ja: str | None = None
    # The command as WP-CLI reads it (command_grammar), for the checks the agent reads the site for.
    reading: CommandReading | None = None

    @property
    def decision(self) -> str:
        return self.category.decision

    @property
    def blocked(self) -> bool:
        return self.category is PolicyCategory.BLOCKED

    @property
    def needs_approval(self) -> bool:
        return self.category is PolicyCategory.DESTRUCTIVE

    @property
    def may_change_site(self) -> bool:
        """Neither a read nor refused: it runs as a change (now, or once approved)."""
        return self.category not in (PolicyCategory.READ, PolicyCategory.BLOCKED)

    def check_json(self) -> dict[str, Any]:
        """The `wp-agent check --json` document; secrets in the argv and reason are masked. A write
        whose declared effect leaves something to the site lists the reads the agent runs first
        (`siteChecks`): unconfirmed, the write waits for approval or is refused."""
        document: dict[str, Any] = {
            "decision": self.decision,
            "category": self.category.value,
            "reason": mask_text(self.reason_ja),
            "rule": self.rule,
            "argv": mask_argv(self.argv),
        }
        checks = site_checks(self.argv, self.command_path) if self.category is PolicyCategory.WRITE else []
        if checks:
            document["siteChecks"] = [
                {
                    "read": mask_argv(check.argv),
                    "unconfirmed": "block" if check.refuse else "confirm",
                    "reason": mask_text(check.reason_ja),
                }
                for check in checks
            ]
        return document


def _hazard_reason(hazard: ShellHazard) -> str:
    if hazard.kind is HazardKind.OPERATOR:
        meaning = _OPERATOR_MEANING_JA.get(hazard.text, "シェルの制御記号")
        return f"シェルの演算子「{hazard.text}」（{meaning}）は使用できません。1回に1つのWP-CLIコマンドだけを指定してください"
    if hazard.kind is HazardKind.SUBSTITUTION:
        return (
            f"コマンド置換・変数展開「{hazard.text}」は使用できません。"
            "本文に記号として含める場合はシングルクォートで囲んでください"
        )
    if hazard.kind is HazardKind.NEWLINE:
        return "クォートの外の改行は使用できません（複数コマンドの連結とみなします）"
    if hazard.kind is HazardKind.ESCAPED_OPERATOR:
        return f"エスケープされたシェル記号「{hazard.text}」は使用できません"
    if hazard.kind is HazardKind.UNBALANCED_QUOTE:
        return "クォートが閉じられていません。コマンドを解釈できないため実行できません"
    return "制御文字を含むコマンドは実行できません"


class CommandPolicy:
    """Deterministic allow-list policy; nothing the model writes can change its decisions."""

    def __init__(
        self,
        custom_rules: CustomRules | None = None,
        *,
        media_test_hosts: frozenset[tuple[str, int]] = frozenset(),
        resolver: HostResolver | None = None,
    ) -> None:
        self._custom = custom_rules or CustomRules()
        # Where the names the server would fetch from point, asked at decision time (None: the system's).
        self._resolver = resolver
        # Tests only (WP_AGENT_MEDIA_TEST_HOSTS): local image servers that media import may name.
        self._media_test_hosts = {f"{host}:{port}" for host, port in media_test_hosts}
        self._allowed: dict[tuple[str, ...], CommandEntry] = dict(ALLOWED_COMMANDS)
        for rule in self._custom.allow:
            hard = self._hard_block(rule.path)
            if hard is not None:
                raise ConfigurationError(
                    f"「{rule.command}」は常にブロックされるコマンドのため許可リストに追加できません",
                    setting="allow",
                )
            category = PolicyCategory(rule.category)
            builtin = ALLOWED_COMMANDS.get(rule.path)
            if builtin is not None and category.rank < builtin.category.rank:
                # An allow rule adds commands; it never turns an approval into a silent write.
                raise ConfigurationError(
                    f"「{rule.command}」は標準で「{builtin.category.value}」のコマンドです。"
                    f"許可ルールでより緩い分類（{category.value}）にはできません",
                    setting="allow",
                )
            self._allowed[rule.path] = CommandEntry(
                rule.path, category, rule.reason or f"{rule.command}（追加許可）", custom=True
            )

    @classmethod
    def from_settings(cls, settings: PolicySettings) -> CommandPolicy:
        return cls(
            load_custom_rules(settings.wp_agent_policy_file, settings.wp_agent_policy_rules),
            media_test_hosts=parse_test_hosts(settings.wp_agent_media_test_hosts),
        )

    # -- public API -----------------------------------------------------------------------------

    def classify(self, command: str) -> PolicyDecision:
        if not isinstance(command, str) or not command.strip():
            return self._block(command or "", "blocked.empty", "コマンドが空です", None)
        command = command.strip()  # a trailing newline ends the command; inner ones are still refused
        if len(command) > MAX_COMMAND_CHARS:
            return self._block(
                command, "blocked.too_long", f"コマンドが長すぎます（最大{MAX_COMMAND_CHARS}文字）", None
            )
        hazards = find_shell_hazards(command)
        if hazards:
            first = hazards[0]
            return self._block(command, _HAZARD_RULES[first.kind], _hazard_reason(first), first.text)
        try:
            words = split_words(command)
        except ValueError:
            return self._block(command, "blocked.parse_error", "コマンドを解釈できません", None)
        if words and words[0] == "wp":
            words = words[1:]
        return self._classify_words(command, tuple(words))

    def resolve(self, command: str) -> tuple[ParsedCommand, tuple[str, ...]] | None:
        """The canonical parsed command and the allow-list path it falls under (None if none);
        what the argument rules see. For tests of the rules' own examples."""
        words = split_words(command.strip())
        parsed = ParsedCommand.from_argv(canonical_argv(tuple(words[1:] if words[:1] == ["wp"] else words)))
        entry = self._lookup(parsed.positionals)
        return None if entry is None else (parsed, entry.path)

    def classify_argv(self, argv: Sequence[str]) -> PolicyDecision:
        """Classify an argv built by our own code (e.g. publishArticle); quoted so values stay data."""
        return self.classify(shlex.join(argv))

    # -- steps ----------------------------------------------------------------------------------

    def _classify_words(self, command: str, argv: tuple[str, ...]) -> PolicyDecision:
        if not argv:
            return self._block(command, "blocked.empty", "WP-CLIのコマンドが指定されていません", None)
        if len(argv) > MAX_ARGUMENTS:
            return self._block(
                command,
                "blocked.too_many_arguments",
                f"引数が多すぎます（最大{MAX_ARGUMENTS}個）",
                None,
                argv,
            )
        if argv[0].startswith("@"):
            return self._block(
                command,
                "blocked.alias",
                "WP-CLIのエイリアス（@…）による別サーバーでの実行はできません",
                argv[0],
                argv,
            )
        # Every rule below sees the command WP-CLI will really run (`option set` is `option update`);
        # that canonical argv is also what runs.
        argv = canonical_argv(argv)
        parsed = ParsedCommand.from_argv(argv)
        odd_flag = non_plain_flag_name(parsed)
        if odd_flag is not None:
            verdict = non_plain_flag_verdict(odd_flag)
            return self._block(command, verdict.rule, verdict.reason_ja, verdict.pattern, argv)
        disguised = disguised_option(parsed)
        if disguised is not None:
            return self._block(
                command,
                "blocked.non_ascii_identifier",
                f"オプションに見える引数（{ascii(disguised)[1:-1]}）に全角文字や見えない文字が含まれています。"
                "オプションは半角の --名前=値 で指定してください",
                disguised,
                argv,
            )
        for option in parsed.options:
            if option.name in FORBIDDEN_GLOBALS:
                return self._block(
                    command,
                    f"blocked.global_option.{option.name}",
                    FORBIDDEN_GLOBALS[option.name],
                    f"--{option.name}",
                    argv,
                )
        hard = self._hard_block(parsed.positionals)
        if hard is not None:
            return self._block(command, hard.rule, hard.reason_ja, " ".join(hard.path), argv, hard.path)
        for rule in self._custom.deny:
            if parsed.positionals[: len(rule.path)] == rule.path:
                reason = rule.reason or f"このサイトの設定で「{rule.command}」は禁止されています"
                return self._block(
                    command, f"custom.deny:{rule.command}", reason, rule.command, argv, rule.path
                )
        entry = self._lookup(parsed.positionals)
        if entry is None:
            return self._unknown(command, argv, parsed)
        return self._apply_argument_rules(command, argv, parsed, entry)

    def _apply_argument_rules(
        self, command: str, argv: tuple[str, ...], parsed: ParsedCommand, entry: CommandEntry
    ) -> PolicyDecision:
        reading = read_command(parsed, entry.path)
        if isinstance(reading, Ambiguity):
            return self._block(command, reading.rule, reading.reason_ja, reading.pattern, argv, entry.path)
        decision = dataclasses.replace(self._argument_decision(command, argv, parsed, entry), reading=reading)
        if decision.category is PolicyCategory.WRITE:
            decision = self._fetches_stay_public(decision)
        elif not decision.blocked and decision.category is not PolicyCategory.READ:
            decision = self._server_fetches_stay_public(decision, parsed, command)
        if (
            decision.category is PolicyCategory.DESTRUCTIVE
            and reading is not None
            and reading.synopsis.prompts
            and not reading.has("yes")
        ):
            # An approved command must not stop at WP-CLI's own "Are you sure?": it reads end-of-file
            # as no and ends as a success having done nothing.
            answered = dataclasses.replace(reading, options={**reading.options, "yes": None})
            decision = dataclasses.replace(decision, argv=(*decision.argv, "--yes"), reading=answered)
        return decision

    def _argument_decision(
        self, command: str, argv: tuple[str, ...], parsed: ParsedCommand, entry: CommandEntry
    ) -> PolicyDecision:
        verdicts = [
            v for rule in rules_for(entry.path) if (v := _asked(rule, parsed, entry.path)) is not None
        ]
        verdicts = [v for v in verdicts if not self._allowed_test_media(v)]
        if entry.category is PolicyCategory.READ and not entry.custom:
            # A built-in read stays read-only whatever its flags (e.g. verify-checksums --all).
            verdicts = [v for v in verdicts if v.category is PolicyCategory.BLOCKED]
        strongest = strictest(verdicts)
        if strongest is not None and strongest.category is PolicyCategory.BLOCKED:
            return self._block(
                command, strongest.rule, strongest.reason_ja, strongest.pattern, argv, entry.path
            )
        name = " ".join(entry.path)
        for rule in self._custom.confirm:
            if entry.path[: len(rule.path)] == rule.path and entry.category is not PolicyCategory.DESTRUCTIVE:
                reason = rule.reason or f"このサイトの設定で「{rule.command}」は承認が必要です"
                strongest = Verdict(
                    PolicyCategory.DESTRUCTIVE, f"custom.confirm:{rule.command}", reason, rule.command
                )
        read_only = read_only_flag(parsed, entry.path)
        if read_only is not None and strongest is None:
            return self._decision(
                command,
                PolicyCategory.READ,
                argv,
                entry,
                f"allow.{name.replace(' ', '.')}.{read_only.flag}",
                read_only.reason_ja,
                f"--{read_only.flag}",
            )
        if strongest is not None and strongest.category.rank >= entry.category.rank:
            return self._decision(
                command,
                strongest.category,
                argv,
                entry,
                strongest.rule,
                strongest.reason_ja,
                strongest.pattern,
            )
        if entry.category is PolicyCategory.DESTRUCTIVE:
            reason = f"{entry.label_ja}は取り消せない、または影響の大きい操作のため、依頼者の承認が必要です"
            return self._decision(
                command, entry.category, argv, entry, f"confirm.{name.replace(' ', '.')}", reason, name
            )
        if entry.category is PolicyCategory.WRITE:
            reason = (
                f"{entry.label_ja}（サイトを変更する操作）です。変更できる範囲が宣言された書き込みで、その範囲内のため承認なしで実行できます"
                if not entry.custom
                else f"{entry.label_ja}（サイトを変更する操作）です。このサイトの設定で許可されているため実行できます"
            )
        else:
            reason = f"{entry.label_ja}（読み取り専用）のため実行できます"
        return self._decision(
            command, entry.category, argv, entry, f"allow.{name.replace(' ', '.')}", reason, name
        )

    def _unknown(self, command: str, argv: tuple[str, ...], parsed: ParsedCommand) -> PolicyDecision:
        head = parsed.positionals[:1]
        hint = _REAL_WP_CLI_HINTS.get(tuple(parsed.positionals[:2])) or _REAL_WP_CLI_HINTS.get(tuple(head))
        if hint is not None:
            return self._block(
                command, "blocked.unknown_command", hint, " ".join(parsed.positionals[:2]), argv
            )
        family_known = bool(head) and any(path[0] == head[0] for path in self._allowed)
        # The word that failed to match: a look-alike spelling gets the reason that says why.
        unmatched = parsed.positionals[1:2] if family_known else head
        if unmatched and not is_plain(unmatched[0]):
            return self._block(
                command,
                "blocked.non_ascii_identifier",
                "コマンド名は半角英数字で指定してください（全角文字や見えない文字は使えません）",
                unmatched[0],
                argv,
            )
        if family_known:
            shown = " ".join(parsed.positionals[:2])
            return self._block(
                command,
                "blocked.unknown_subcommand",
                f"「{shown}」は許可されていないサブコマンドです（許可リスト方式）",
                shown,
                argv,
            )
        shown = head[0] if head else argv[0]
        return self._block(
            command,
            "blocked.unknown_command",
            f"「{shown}」は許可されていないコマンドです（許可リスト方式）",
            shown,
            argv,
        )

    def _fetches_stay_public(self, decision: PolicyDecision) -> PolicyDecision:
        """A write the server fetches for (an embed, a published post's links, a media download) runs
        without approval only while every host name it names resolves to public addresses."""
        names = fetched_host_names(decision.argv, decision.command_path)
        refused = not_public(names, self._resolver or host_resolution.system_resolver)
        if not refused:
            return decision
        shown = "、".join(refused[:5]) + (f" ほか{len(refused) - 5}件" if len(refused) > 5 else "")
        return dataclasses.replace(
            decision,
            category=PolicyCategory.DESTRUCTIVE,
            rule=SERVER_FETCH_RULE,
            reason_ja=(
                f"サーバーが取得するURLのホスト名「{shown}」が、いま公開のアドレスに解決できません（内部ネットワーク・"
                "クラウドのメタデータ・存在しない名前など）。サーバーから内部へのアクセスになり得るため承認が必要です"
            ),
            pattern=",".join(refused),
        )

    def _server_fetches_stay_public(
        self, decision: PolicyDecision, parsed: ParsedCommand, command: str
    ) -> PolicyDecision:
        """A held command the server fetches a URL for (`embed fetch`, `media replace`) is refused when a
        host name it names resolves inside: an approval does not make an inward fetch acceptable."""
        _, names = hosts_fetched(server_fetched(parsed, decision.command_path))
        refused = not_public(names, self._resolver or host_resolution.system_resolver)
        if not refused:
            return decision
        return self._block(
            command,
            SERVER_FETCH_PRIVATE_RULE,
            f"サーバーが取得するURLのホスト名「{'、'.join(refused[:5])}」が、いま公開のアドレスに解決できません"
            "（内部ネットワーク・クラウドのメタデータ・存在しない名前など）。サーバーから内部へのアクセスになるため実行できません",
            ",".join(refused),
            decision.argv,
            decision.command_path,
        )

    # -- helpers --------------------------------------------------------------------------------

    def _allowed_test_media(self, verdict: Verdict) -> bool:
        return (
            verdict.rule == MEDIA_PRIVATE_HOST_RULE
            and set(verdict.pattern.split(",")) <= self._media_test_hosts
        )

    @staticmethod
    def _hard_block(positionals: tuple[str, ...]) -> HardBlock | None:
        for block in HARD_BLOCKS:
            if positionals[: len(block.path)] != block.path:
                continue
            # A longer built-in row of the family (`db size` under `db`) is that row's to decide.
            if any(
                positionals[:length] in ALLOWED_COMMANDS
                for length in range(len(block.path) + 1, min(len(positionals), 4) + 1)
            ):
                continue
            return block
        return None

    def _lookup(self, positionals: tuple[str, ...]) -> CommandEntry | None:
        if positionals[:1] == ("help",):
            return self._allowed[("help",)]
        for length in range(min(len(positionals), 4), 0, -1):
            entry = self._allowed.get(positionals[:length])
            if entry is not None:
                return entry
        return None

    @staticmethod
    def _decision(
        command: str,
        category: PolicyCategory,
        argv: tuple[str, ...],
        entry: CommandEntry,
        rule: str,
        reason: str,
        pattern: str | None,
    ) -> PolicyDecision:
        return PolicyDecision(command, category, argv, reason, rule, pattern, entry.path, entry.label_ja)

    @staticmethod
    def _block(
        command: str,
        rule: str,
        reason: str,
        pattern: str | None,
        argv: tuple[str, ...] = (),
        path: tuple[str, ...] = (),
    ) -> PolicyDecision:
        return PolicyDecision(command, PolicyCategory.BLOCKED, argv, reason, rule, pattern, path, None)


RULE_FAILED = "blocked.policy_error"
RULE_FAILED_JA = "このコマンドを判定できなかったため実行しません（判定の不具合として記録しました）"


def _asked(rule: ArgumentRule, parsed: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    """`rule`'s verdict; a rule that fails on a command (a fault of ours) refuses it rather than ending the
    request that asked: the boundary fails closed, and the fault is logged to be fixed."""
    try:
        return rule.check(parsed, path)
    except Exception:
        logger.exception(
            "an argument rule failed; the command is refused", extra={"rule": rule.name, "path": list(path)}
        )
        return Verdict(
            PolicyCategory.BLOCKED,
            RULE_FAILED,
            RULE_FAILED_JA,
            " ".join(path),
        )
