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
    summary: dict[str, Any] = {"count": len(rows)}
    notes = [f"全{len(rows)}件。"]
    if ids:
        ascending = _ascending_runs(ids[:MAX_IDS])
        if ascending is not None:
            summary["ids_ascending"] = ascending
            notes.append('ids_ascending は全件のIDの昇順（"a-b" は a〜b の連続する全ID）。')
        else:
            summary["ids"] = ids[:MAX_IDS]
            notes.append("ids は全件のID。")
        if len(ids) > MAX_IDS:
            summary["ids_omitted"] = len(ids) - MAX_IDS
    summary.update(_sample_table(rows))
    notes.append(
        f"内容は先頭{min(len(rows), SAMPLE_ROWS)}件だけです（rows の列は columns、same_in_all_rows は全件に共通の値）。"
        "続きは --posts_per_page と --paged、項目は --fields で絞って取得してください。"
    )
    return "".join(notes) + "\n" + json.dumps(summary, ensure_ascii=False, separators=(",", ":"))


def _ascending_runs(ids: list[Any]) -> list[Any] | None:
    """Distinct integer IDs in ascending order, each run of three or more written "first-last"; None
    when they are not distinct integers (then they are shown as listed)."""
    if not all(type(i) is int for i in ids) or len(set(ids)) != len(ids):
        return None
    runs: list[Any] = []
    ordered = sorted(ids)
    start = previous = ordered[0]
    for value in [*ordered[1:], None]:
        if value is not None and value == previous + 1:
            previous = value
            continue
        runs.extend([f"{start}-{previous}"] if previous - start >= 2 else range(start, previous + 1))
        if value is not None:
            start = previous = value
    return runs


def _sample_table(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The first SAMPLE_ROWS rows as a table; a column with one value in every row is given once."""
    columns = list(rows[0]) if rows else []
    if any(list(r) != columns for r in rows):
        return {"first_rows": [{k: _clip(v) for k, v in r.items()} for r in rows[:SAMPLE_ROWS]]}
    same = {c: rows[0][c] for c in columns if len(rows) > 1 and all(r[c] == rows[0][c] for r in rows)}
    shown = [c for c in columns if c not in same]
    table: dict[str, Any] = {
        "columns": shown,
        "rows": [[_clip(r[c]) for c in shown] for r in rows[:SAMPLE_ROWS]],
    }
    if same:
        table["same_in_all_rows"] = {k: _clip(v) for k, v in same.items()}
    return table


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
