"""What the model sees of a command's output: wrapped as untrusted data and capped.

The full output stays in the command record (up to 10 MB); the model gets at most
MODEL_OUTPUT_LIMIT_CHARS, and a long JSON list keeps its count and every ID but only a sample of rows.
"""

from __future__ import annotations

import json
from typing import Any

from wp_agent.agent.untrusted_markers import neutralise_markers
from wp_agent.masking import mask_command_output

MODEL_OUTPUT_LIMIT_CHARS = 6_000
SAMPLE_ROWS = 20
MAX_IDS = 1_000
MAX_FIELD_CHARS = 160
_ID_KEYS = ("ID", "id", "term_id", "comment_ID", "comment_id", "blog_id", "user_id", "term_taxonomy_id")


def _escape(text: str) -> str:
    # The wrapper must not be closable (or re-openable) from inside the data, in any spelling.
    return neutralise_markers(text)


def _clip(value: Any) -> Any:
    if isinstance(value, str) and len(value) > MAX_FIELD_CHARS:
        return value[:MAX_FIELD_CHARS] + f"…（{len(value) - MAX_FIELD_CHARS}文字省略）"
    return value


def _row_id(row: dict[str, Any]) -> Any:
    return next((row[k] for k in _ID_KEYS if k in row), None)


def _summarise_list(rows: list[Any]) -> str:
    if not all(isinstance(r, dict) for r in rows):
        shown = rows[:MAX_IDS]
        more = f"（ほか{len(rows) - len(shown)}件省略）" if len(rows) > len(shown) else ""
        return json.dumps({"count": len(rows), "items": shown}, ensure_ascii=False) + more
    ids = [i for i in (_row_id(r) for r in rows) if i is not None]
    sample = [{k: _clip(v) for k, v in r.items()} for r in rows[:SAMPLE_ROWS]]
    summary: dict[str, Any] = {"count": len(rows)}
    if ids:
        summary["ids"] = ids[:MAX_IDS]
        if len(ids) > MAX_IDS:
            summary["ids_omitted"] = len(ids) - MAX_IDS
    summary["first_rows"] = sample
    note = (
        f"全{len(rows)}件のうち先頭{len(sample)}件の内容だけを表示しています（IDは全件）。"
        "詳しく見るには --fields で項目を絞るか、--posts_per_page と --paged で分けて取得してください。"
    )
    return note + "\n" + json.dumps(summary, ensure_ascii=False, separators=(",", ":"))


def _shape_text(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    head = text[: int(limit * 0.75)]
    tail = text[-int(limit * 0.2) :]
    return f"{head}\n…（{len(text) - len(head) - len(tail)}文字省略）…\n{tail}"


def shape_stdout(stdout: str, limit: int = MODEL_OUTPUT_LIMIT_CHARS) -> str:
    """Reduce stdout to what the model needs: small outputs unchanged, big JSON lists summarised."""
    if len(stdout) <= limit:
        return stdout
    stripped = stdout.strip()
    if stripped.startswith("["):
        try:
            parsed = json.loads(stripped)
        except ValueError:
            parsed = None
        if isinstance(parsed, list):
            return _shape_text(_summarise_list(parsed), limit * 2)
    if stripped.startswith("{"):
        try:
            obj = json.loads(stripped)
        except ValueError:
            obj = None
        if isinstance(obj, dict):
            return _shape_text(json.dumps({k: _clip(v) for k, v in obj.items()}, ensure_ascii=False), limit)
    return _shape_text(stdout, limit)


def render_tool_result(
    *,
    command: str,
    exit_code: int | None,
    stdout: str,
    stderr: str,
    truncated: bool = False,
    simulated: bool = False,
    note: str | None = None,
) -> str:
    """The text of one tool_result block."""
    attributes = f'command="{_escape(command).replace(chr(34), chr(39))}" exit_code="{exit_code}" trust="untrusted-data"'
    if simulated:
        attributes += ' site="sandbox"'
    parts = [f"<tool_output {attributes}>"]
    if stdout:
        parts.append(_escape(shape_stdout(mask_command_output(stdout))))
    if stderr:
        parts.append("[stderr]\n" + _escape(_shape_text(mask_command_output(stderr), 2_000)))
    if truncated:
        parts.append("[出力が10MBを超えたため途中で切り詰められました]")
    if not stdout and not stderr:
        parts.append("（出力なし）")
    parts.append("</tool_output>")
    if note:
        parts.append(note)
    return "\n".join(parts)
