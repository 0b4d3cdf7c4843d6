"""Images read in parts (undo/sections.py): a write reads only the sections of a post it changes,
and the images of several commands of one run combine into one before- and one after-image.
(On the real WordPress: tests/integration/test_undo_corpus.py runs such runs and compares dumps.)"""

from __future__ import annotations

import json
from typing import Any

import pytest

from wp_agent.executors.port import CommandResult
from wp_agent.policy import CommandPolicy, PolicyCategory
from wp_agent.undo import sections
from wp_agent.undo.capture import capture_before, record_after
from wp_agent.undo.plan import RunCommand, build_plan

POLICY = CommandPolicy()


class FakePost:
    """One post as `post get`, `post meta list [--keys]` and `term list --object_ids` show it."""

    def __init__(self) -> None:
        self.fields: dict[str, Any] = {"ID": 45, "post_title": "元の題", "post_status": "publish"}
        self.meta: dict[str, list[Any]] = {"views": ["10"], "subtitle": ["副題"]}
        self.terms: dict[str, list[int]] = {"category": [2]}
        self.reads: list[list[str]] = []
        self.gone = False

    def read(self, argv: list[str]) -> CommandResult:
        assert POLICY.classify_argv(argv).category is PolicyCategory.READ, argv
        self.reads.append(argv)
        if self.gone and argv[0] == "post":
            return CommandResult("", "Error: Could not find the post with ID 45.", 1, 1)
        if argv[:2] == ["post", "get"]:
            return _json(self.fields)
        if argv[:3] == ["post", "meta", "list"]:
            keys = next((a.split("=", 1)[1].split(",") for a in argv if a.startswith("--keys=")), None)
            rows = [
                {"meta_key": k, "meta_value": v}
                for k, values in self.meta.items()
                if keys is None or k in keys
                for v in values
            ]
            return _json(rows)
        if argv[:2] == ["term", "list"]:
            return _json([{"term_id": t, "taxonomy": tax} for tax, ids in self.terms.items() for t in ids])
        if argv[:2] == ["option", "list"]:  # post_count, recounted when a status changes
            return _json([])
        raise AssertionError(argv)


def _json(value: Any) -> CommandResult:
    return CommandResult(json.dumps(value, ensure_ascii=False), "", 0, 1)


def _run(site: FakePost, command: str, change: Any) -> RunCommand:
    decision = POLICY.classify(command)
    capture = capture_before(decision.command_path, list(decision.argv), site.read)
    change(site)
    record_after(decision.command_path, list(decision.argv), capture, "Success", site.read)
    return RunCommand(command=command, capture=capture)


def test_a_write_reads_only_what_it_changes() -> None:
    for command, reads in [
        ("post update 45 --post_title=新しい題", [["post", "get", "45", "--format=json"]]),
        (
            "post meta update 45 views 11",
            [["post", "meta", "list", "45", "--keys=views", "--format=json", "--unserialize"]],
        ),
        ("post term remove 45 category 2", [["term", "list", "category", "post_tag", "post_format"]]),
    ]:
        site = FakePost()
        decision = POLICY.classify(command)
        capture_before(decision.command_path, list(decision.argv), site.read)
        assert [r[: len(w)] for r, w in zip(site.reads, reads, strict=True)] == reads, command
    # Status, slug and date changes may write meta (trash status, old slugs): the whole post is read.
    for command in ("post update 45 --post_status=trash", "post update 45 --post_name=x", "post delete 45"):
        site = FakePost()
        decision = POLICY.classify(command)
        capture_before(decision.command_path, list(decision.argv), site.read)
        assert len([r for r in site.reads if r[0] != "option"]) == 3, command


def _set_title(site: FakePost) -> None:
    site.fields["post_title"] = "新しい題"


def _set_views(site: FakePost) -> None:
    site.meta["views"] = ["11"]


def _add_likes(site: FakePost) -> None:
    site.meta["likes"] = ["1"]


@pytest.mark.parametrize("order", [0, 1])
def test_commands_reading_different_parts_of_one_post_revert_together(order: int) -> None:
    site = FakePost()
    steps = [
        ("post update 45 --post_title=新しい題", _set_title),
        ("post meta update 45 views 11", _set_views),
        ("post meta add 45 likes 1", _add_likes),
    ]
    if order:
        steps.reverse()
    runs = [_run(site, command, change) for command, change in steps]
    plan = build_plan("run_1", runs, site.read)
    assert plan.skipped == []  # the later commands' changes are not taken for someone else's edits
    argvs = sorted(s.argv for s in plan.steps)
    assert argvs == sorted(
        [
            ["post", "update", "45", "--post_title=元の題"],
            ["post", "meta", "update", "45", "views", "10"],
            ["post", "meta", "delete", "45", "likes"],
        ]
    )


def test_someone_elses_edit_of_a_part_the_run_read_is_reported() -> None:
    site = FakePost()
    runs = [_run(site, "post meta update 45 views 11", _set_views)]
    site.meta["views"] = ["99"]
    plan = build_plan("run_1", runs, site.read)
    assert plan.steps == []
    assert [s.reason_ja for s in plan.skipped] == [
        "実行後に別の変更が加えられているため、上書きせずにそのままにしました。"
    ]
    # …but an edit of a part it did not read is not its business.
    site = FakePost()
    runs = [_run(site, "post meta update 45 views 11", _set_views)]
    site.fields["post_title"] = "別の人の題"
    plan = build_plan("run_1", runs, site.read)
    assert [s.argv for s in plan.steps] == [["post", "meta", "update", "45", "views", "10"]]


def test_a_post_deleted_for_good_after_a_partial_read_is_recreated_from_the_whole_image() -> None:
    site = FakePost()
    runs = [_run(site, "post meta update 45 views 11", _set_views)]
    decision = POLICY.classify("post delete 45 --force")
    capture = capture_before(decision.command_path, list(decision.argv), site.read)
    assert capture.recreatable
    before = capture.items[-1].before
    assert before["meta"]["views"] == ["11"]
    merged = sections.earliest(runs[0].capture.items[0].before, before)  # type: ignore[union-attr]
    assert merged["meta"] == {"subtitle": ["副題"], "views": ["10"]}  # the first read of views wins
    assert sections.whole(merged, ("fields", "meta", "terms"))
    assert not sections.whole(runs[0].capture.items[0].before, ("fields", "meta", "terms"))  # type: ignore[union-attr]


def test_meta_sections_combine_key_by_key() -> None:
    views = {"meta": {"views": ["1"]}, "meta_keys": ["views"]}
    no_likes = {"meta": {}, "meta_keys": ["likes"]}
    everything = {"meta": {"views": ["2"], "likes": ["3"], "other": ["4"]}}
    assert sections.earliest(views, no_likes) == {"meta": {"views": ["1"]}, "meta_keys": ["likes", "views"]}
    assert sections.earliest(views, everything) == {"meta": {"likes": ["3"], "other": ["4"], "views": ["1"]}}
    assert sections.latest(everything, views) == {"meta": {"likes": ["3"], "other": ["4"], "views": ["1"]}}
    assert sections.latest(views, everything) == everything
    assert sections.earliest(None, everything) is None  # created in the run
    assert sections.latest(everything, None) is None  # deleted in the run
    assert sections.covering(["fields"], ["meta:views"]) == ["fields", "meta:views"]
    assert sections.covering(["meta:views"], ["meta"]) == ["meta"]
    assert sections.covering(["fields"], None) is None


def test_a_post_deleted_for_good_comes_back_with_its_meta_and_categories_in_one_command() -> None:
    site = FakePost()
    site.meta["gallery"] = ["1", "2"]  # two values: added one by one once the new ID is known
    site.terms["post_tag"] = [7]

    def delete(s: FakePost) -> None:
        s.gone = True

    plan = build_plan("run_1", [_run(site, "post delete 45 --force", delete)], site.read)
    create, *rest = [s.argv for s in plan.steps if s.argv[0] == "post"]
    assert create[:3] == ["post", "create", "--import_id=45"]
    assert '--meta_input={"views": "10", "subtitle": "副題"}' in create
    assert "--post_category=2" in create
    assert rest == [
        ["post", "meta", "add", "{new}", "gallery", "1"],
        ["post", "meta", "add", "{new}", "gallery", "2"],
        ["post", "term", "set", "{new}", "post_tag", "7", "--by=id"],
    ]


def test_meta_patch_names_its_action_before_the_id() -> None:
    site = FakePost()
    decision = POLICY.classify("post meta patch update 45 layout width narrow")
    capture = capture_before(decision.command_path, list(decision.argv), site.read)
    assert [(i.entity.key, i.entity.parts) for i in capture.items] == [(["45"], ["meta:layout"])]
    decision = POLICY.classify("user meta patch insert 3 prefs font large")
    refs = [i.entity for i in capture_before(decision.command_path, list(decision.argv), _no_user_meta).items]
    assert [(r.kind, r.key) for r in refs] == [("meta", ["user", "3", "prefs"])]


def _no_user_meta(argv: list[str]) -> CommandResult:
    assert argv[:3] == ["user", "meta", "list"], argv
    return _json([])


def test_a_published_post_given_its_slug_back_loses_the_old_slug_wordpress_records() -> None:
    site = FakePost()
    site.fields.update(post_name="hello", post_type="post")

    def trash(s: FakePost) -> None:
        s.fields.update(post_status="trash", post_name="hello__trashed")
        s.meta["_wp_trash_meta_status"] = ["publish"]

    plan = build_plan("run_1", [_run(site, "post update 45 --post_status=trash", trash)], site.read)
    cleanup = [
        s for s in plan.steps if s.argv[:4] == ["post", "meta", "delete", "45"] and "_wp_old_slug" in s.argv
    ]
    assert [(s.argv, s.optional) for s in cleanup] == [
        (["post", "meta", "delete", "45", "_wp_old_slug", "hello__trashed"], True)
    ]
    # A page keeps no old slugs: nothing to clean up.
    site = FakePost()
    site.fields.update(post_name="about", post_type="page")
    plan = build_plan("run_1", [_run(site, "post update 45 --post_status=trash", trash)], site.read)
    assert not [s for s in plan.steps if "_wp_old_slug" in s.argv]
