"""The eval task data (eval/tasks/*.yaml): what the suite covers, and clear errors for bad task files."""

from __future__ import annotations

from collections import Counter
from datetime import date
from pathlib import Path

import pytest

from wp_agent.errors import ConfigurationError
from wp_agent.evaluation.tasks import Category, EvalTask, fill_dates, load_tasks


def test_the_suite_covers_every_kind_of_instruction() -> None:
    tasks = load_tasks()
    counts = Counter(task.category for task in tasks)
    assert len(tasks) >= 60
    assert counts[Category.FULLY_SPECIFIED] >= 15
    assert counts[Category.OBSERVATION] >= 8
    assert counts[Category.AMBIGUOUS] >= 5
    assert counts[Category.DESTRUCTIVE] >= 8
    assert counts[Category.ADVERSARIAL] >= 10
    tags = {tag for task in tasks for tag in task.tags}
    assert {"list", "create", "schedule", "retag", "settings", "multisite"} <= tags
    assert len({task.instruction for task in tasks if "fr-1.4" in task.tags}) == 5  # the five FR-1.4 cases
    assert any(task.user.answer for task in tasks if task.expect.question)  # asked, answered, then done


def test_every_task_is_judged_by_more_than_its_answer_text() -> None:
    for task in load_tasks():
        judged = task.checks or task.expect.question or task.expect.read_only
        assert judged, task.id
        if task.category in {Category.DESTRUCTIVE}:
            assert task.expect.approval, task.id
        if task.category is Category.ADVERSARIAL:
            assert task.user.approves is False, task.id
            assert task.setup or task.must_not.secrets, task.id


def test_tasks_select_by_id_or_category_with_wildcards() -> None:
    selected = load_tasks(pattern="ambiguous,list-*")
    assert all(t.category is Category.AMBIGUOUS or t.id.startswith("list-") for t in selected)
    assert {"list-drafts", "fr14-target-unknown"} <= {t.id for t in selected}
    with pytest.raises(ConfigurationError, match="一致する評価タスクがありません"):
        load_tasks(pattern="no-such-task")


def test_date_placeholders_are_the_sites_relative_days() -> None:
    wednesday = date(2026, 11, 25)
    assert fill_dates("{yesterday} {today} {tomorrow}", wednesday) == "2026-11-24 2026-11-25 2026-11-26"
    assert fill_dates("{day_after_tomorrow} {next_monday}", wednesday) == "2026-11-27 2026-11-30"
    assert fill_dates("{next_monday}", date(2026, 11, 30)) == "2026-12-07"  # a Monday: the next week's
    assert fill_dates('{"a": 1} {unknown}', wednesday) == '{"a": 1} {unknown}'


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ("category: nope\ntasks: []\n", "category"),
        ("category: observation\ntasks:\n  - id: x1\n    instruction: 見せて\n", "a task needs state checks"),
        ("category: observation\ntasks:\n  - {id: Bad_Id, instruction: x, expect: {read_only: true}}\n", "id"),
        ("category: observation\ntasks:\n  - {id: ok-id, instruction: x, expect: {question: true}, "
         "reference: ['post delete 1']}\n", "changes nothing"),
        ("category: observation\ntasks:\n  - {id: ok-id, instruction: x, checks: [{wp: 'post get 1', "
         "matches: '(' }]}\n", "checks"),
        ("category: observation\ntasks: [\n", "tasks.yaml"),
        ("category: observation\ntasks:\n  - {id: ok-id, instruction: x, setup: [\"eval 'system(1);'\"], "
         "expect: {read_only: true}, checks: [{wp: 'post get 1'}]}\n", "setup/reference command refused"),
        ("category: observation\ntasks:\n  - {id: ok-id, instruction: x, setup: ['option get x --exec=1'], "
         "checks: [{wp: 'post get 1'}]}\n", "setup/reference command refused"),
        ("category: observation\ntasks:\n  - {id: ok-id, instruction: x, checks: [{wp: 'post delete 1'}]}\n",
         "a check must only read"),
        ("category: observation\ntasks:\n  - {id: ok-id, instruction: x, checks: [{wp: 'post get 1'}], "
         "must_not: {secrets: ['config set DB_PASSWORD x']}}\n", "a check must only read"),
    ],
)  # fmt: skip
def test_a_bad_task_file_is_refused_with_the_file_and_field(tmp_path: Path, body: str, problem: str) -> None:
    (tmp_path / "tasks.yaml").write_text(body, encoding="utf-8")
    with pytest.raises(ConfigurationError) as raised:
        load_tasks(tmp_path)
    assert "tasks.yaml" in raised.value.message_ja
    assert problem in raised.value.message_ja


def test_duplicate_ids_are_refused(tmp_path: Path) -> None:
    task = "  - {id: same, instruction: x, expect: {read_only: true, answer_mentions: [x]}}\n"
    (tmp_path / "a.yaml").write_text("category: observation\ntasks:\n" + task, encoding="utf-8")
    (tmp_path / "b.yaml").write_text("category: ambiguous\ntasks:\n" + task, encoding="utf-8")
    with pytest.raises(ConfigurationError, match="重複"):
        load_tasks(tmp_path)


def test_a_task_fills_its_dates_in_setup_reference_and_checks() -> None:
    task = EvalTask.model_validate(
        {
            "id": "dated",
            "category": "observation",
            "instruction": "昨日の下書きを公開して",
            "setup": ['post update 41 --post_date="{yesterday} 15:00:00" --edit_date=1'],
            "checks": [{"wp": "post get 41 --field=post_date", "equals": "{yesterday} 15:00:00"}],
            "reference": ["post update 41 --post_status=publish"],
        }
    )
    today = date(2026, 1, 1)
    assert task.setup_argv(today) == [
        ["post", "update", "41", "--post_date=2025-12-31 15:00:00", "--edit_date=1"]
    ]
    assert task.checks[0].on(today).equals == "2025-12-31 15:00:00"
    assert task.changes_state
