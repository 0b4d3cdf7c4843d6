"""The images of the writes of one reply are read together (undo/shared_reads.py, images.py): a read
several images need runs once, meta keys of one object are read in one read, and what fails or holds a
secret spoils only the image of the command it belongs to."""

from __future__ import annotations

import json
from typing import Any

from wp_agent.executors.port import CommandResult
from wp_agent.policy import CommandPolicy, PolicyCategory
from wp_agent.undo.capture import capture_before, capture_before_all, record_after_all
from wp_agent.undo.kind import CaptureError
from wp_agent.undo.shared_reads import read_all

POLICY = CommandPolicy()


class Site:
    """Posts as `post get` and `post meta list [--keys]` show them; every read is policy-checked and
    counted."""

    def __init__(self) -> None:
        self.meta: dict[int, dict[str, list[Any]]] = {
            45: {"views": ["10"], "subtitle": ["副題"], "api_key": ["sk-live-0123456789abcdef0123"]},
            46: {"views": ["3"]},
        }
        self.reads: list[list[str]] = []
        self.unreachable: set[int] = set()

    def read(self, argv: list[str]) -> CommandResult:
        decision = POLICY.classify_argv(argv)
        if decision.category is not PolicyCategory.READ:  # as the agent's reader refuses it
            raise CaptureError(f"状態を読み取るコマンドが許可されませんでした（{decision.rule}）")
        self.reads.append(argv)
        post = int(argv[3] if argv[1] == "meta" else argv[2])
        if post in self.unreachable:
            raise CaptureError("状態を読み取れませんでした（SSH_CONNECTION_FAILED）")
        if argv[:2] == ["post", "get"]:
            return _json({"ID": post, "post_title": f"題 {post}", "post_status": "publish"})
        keys = next((a.removeprefix("--keys=").split(",") for a in argv if a.startswith("--keys=")), None)
        rows = [
            {"meta_key": k, "meta_value": v}
            for k, values in self.meta[post].items()
            if keys is None or k in keys
            for v in values
        ]
        return _json(rows)


def _json(value: Any) -> CommandResult:
    return CommandResult(json.dumps(value, ensure_ascii=False), "", 0, 1)


def _commands(*commands: str) -> list[tuple[tuple[str, ...], list[str]]]:
    return [(POLICY.classify(c).command_path, list(POLICY.classify(c).argv)) for c in commands]


def test_one_read_serves_every_meta_key_of_a_post_and_identical_reads_run_once() -> None:
    reply = _commands(
        "post meta update 45 views 11",
        "post meta update 45 subtitle 新しい副題",
        "post update 45 --post_title=新しい題",
        "post update 45 --post_excerpt=抜粋",
    )
    site = Site()
    together = capture_before_all(reply, site.read, workers=5)
    assert sorted(site.reads) == [
        ["post", "get", "45", "--format=json"],
        ["post", "meta", "list", "45", "--keys=subtitle,views", "--format=json", "--unserialize"],
    ]
    alone = Site()
    one_by_one = [capture_before(path, argv, alone.read) for path, argv in reply]
    assert len(alone.reads) == 4
    assert [c.model_dump(exclude={"capture_ms"}) for c in together] == [
        c.model_dump(exclude={"capture_ms"}) for c in one_by_one
    ]
    assert all(c.revertible for c in together)


def test_a_secret_or_a_failed_read_spoils_only_its_own_command() -> None:
    reply = _commands(
        "post meta update 45 api_key new", "post meta update 45 views 11", "post update 46 --post_title=x"
    )
    site = Site()
    site.unreachable.add(46)
    key, views, other = capture_before_all(reply, site.read, workers=5)
    assert not key.revertible
    assert "blocked.secret_name" in key.reason_ja  # a read naming a secret key is refused, on its own
    assert views.revertible
    assert views.items[0].before["meta"] == {"views": ["10"]}
    assert "sk-live" not in json.dumps([c.model_dump() for c in (key, views)], ensure_ascii=False)
    assert not other.revertible
    assert "読み取れません" in other.reason_ja
    assert [r for r in site.reads if r[1] == "meta"] == [
        ["post", "meta", "list", "45", "--keys=views", "--format=json", "--unserialize"]
    ]


def test_after_images_of_a_reply_are_read_together_too() -> None:
    reply = _commands("post meta update 45 views 11", "post meta update 45 subtitle x")
    site = Site()
    captures = capture_before_all(reply, site.read, workers=5)
    site.meta[45]["views"] = ["11"]
    site.meta[45]["subtitle"] = ["x"]
    site.reads.clear()
    record_after_all(
        [(path, argv, capture, "Success") for (path, argv), capture in zip(reply, captures, strict=True)],
        site.read,
        workers=5,
    )
    assert len(site.reads) == 1
    assert [c.items[0].after["meta"] for c in captures] == [{"views": ["11"]}, {"subtitle": ["x"]}]
    assert all(c.items[0].after_recorded for c in captures)


def test_a_read_of_all_meta_serves_the_reads_of_some_keys() -> None:
    site = Site()
    every = ["post", "meta", "list", "46", "--format=json", "--unserialize"]
    some = ["post", "meta", "list", "46", "--keys=views", "--format=json", "--unserialize"]
    other = ["post", "meta", "list", "45", "--keys=views", "--format=json", "--unserialize"]
    answers = read_all([some, every, other, some], site.read, workers=3)
    assert sorted(site.reads) == [other, every]
    assert [json.loads(a.stdout) for a in answers if isinstance(a, CommandResult)] == [
        [{"meta_key": "views", "meta_value": "3"}],
        [{"meta_key": "views", "meta_value": "3"}],
        [{"meta_key": "views", "meta_value": "10"}],
        [{"meta_key": "views", "meta_value": "3"}],
    ]


# -- the fields of several posts: two lists instead of a `post get` each ------------------------------

FIELDS = (
    "ID", "post_author", "post_date", "post_date_gmt", "post_content", "post_title", "post_excerpt",
    "post_status", "comment_status", "ping_status", "post_password", "post_name", "to_ping", "pinged",
    "post_modified", "post_modified_gmt", "post_content_filtered", "post_parent", "guid", "menu_order",
    "post_type", "post_mime_type", "comment_count",
)  # fmt: skip


class Posts:
    """Posts as `post get` and `post list --post__in` show them (`post list --post_type=any` leaves
    revisions out, as WordPress does); every read policy-checked and counted."""

    def __init__(self) -> None:
        self.posts: dict[int, dict[str, Any]] = {
            i: dict.fromkeys(FIELDS, "")
            | {"ID": i, "post_title": f"題 {i}", "post_type": "post", "post_author": "2"}
            for i in (40, 45, 46, 56)
        }
        self.posts[40]["post_password"] = "合言葉"
        self.posts[56]["post_type"] = "revision"
        self.reads: list[list[str]] = []
        self.list_fails = False

    def read(self, argv: list[str]) -> CommandResult:
        assert POLICY.classify_argv(argv).category is PolicyCategory.READ, argv
        self.reads.append(argv)
        if argv[:2] == ["post", "get"]:
            post = self.posts.get(int(argv[2]))
            if post is None:
                return CommandResult("", f"Error: Could not find the post with ID {argv[2]}.\n", 1, 1)
            return _json({**post, "url": f"https://example.test/?p={argv[2]}"})
        if self.list_fails:
            return CommandResult("", "Error: boom\n", 1, 1)
        ids = next(a for a in argv if a.startswith("--post__in=")).split("=")[1].split(",")
        shown = [
            self.posts[int(i)]
            for i in ids
            if int(i) in self.posts and self.posts[int(i)]["post_type"] != "revision"
        ]
        if "--has_password=1" in argv:
            return CommandResult(" ".join(str(p["ID"]) for p in shown if p["post_password"]), "", 0, 1)
        names = next(a for a in argv if a.startswith("--fields=")).split("=")[1].split(",")
        return _json([{n: p[n] for n in names} for p in shown])


def _gets(*ids: int, url: str | None = None) -> list[list[str]]:
    return [["post", "get", str(i), "--format=json", *([f"--url={url}"] if url else [])] for i in ids]


def test_the_fields_of_several_posts_are_two_lists_and_read_as_each_post_get_shows_them() -> None:
    site = Posts()
    answers = read_all(_gets(45, 46, 40), site.read, workers=3)
    assert [r[:2] for r in site.reads] == [["post", "list"], ["post", "list"]]
    assert not any("post_password" in word for read in site.reads for word in read)  # a secret field there
    got = [json.loads(a.stdout) for a in answers if isinstance(a, CommandResult)]
    assert got[0] == site.posts[45]
    assert got[1] == site.posts[46]
    assert got[2]["post_password"] not in ("", "合言葉")  # it has one: the image refuses it, as before
    assert {k: v for k, v in got[2].items() if k != "post_password"} == {
        k: v for k, v in site.posts[40].items() if k != "post_password"
    }


def test_a_post_with_a_password_is_not_captured_whether_read_alone_or_with_others() -> None:
    reply = _commands("post update 45 --post_title=x", "post update 40 --post_title=y")
    together = capture_before_all(reply, Posts().read, workers=3)
    alone = [capture_before(path, argv, Posts().read) for path, argv in reply]
    assert [c.model_dump(exclude={"capture_ms"}) for c in together] == [
        c.model_dump(exclude={"capture_ms"}) for c in alone
    ]
    assert [c.revertible for c in together] == [True, False]


def test_posts_the_lists_do_not_show_are_read_one_by_one() -> None:
    site = Posts()
    answers = read_all(_gets(45, 56, 47), site.read, workers=3)  # a revision, no such post
    assert sorted(" ".join(r[:3]) for r in site.reads if r[1] == "get") == ["post get 47", "post get 56"]
    assert json.loads(answers[1].stdout)["post_type"] == "revision"  # type: ignore[union-attr]
    assert not answers[2].ok  # type: ignore[union-attr]
    assert "Could not find the post" in answers[2].stderr  # type: ignore[union-attr]


def test_a_list_that_fails_leaves_every_post_to_its_own_read() -> None:
    site = Posts()
    site.list_fails = True
    answers = read_all(_gets(45, 46), site.read, workers=3)
    assert [json.loads(a.stdout)["ID"] for a in answers if isinstance(a, CommandResult)] == [45, 46]
    assert len([r for r in site.reads if r[1] == "get"]) == 2


def test_posts_of_different_sites_are_never_listed_together() -> None:
    site = Posts()
    read_all([*_gets(45), *_gets(46, url="https://example.test/en/")], site.read, workers=3)
    assert all(r[1] == "get" for r in site.reads)


def test_the_fields_of_several_terms_of_one_taxonomy_are_one_list() -> None:
    terms = {
        3: {"term_id": 3, "name": "お知らせ", "slug": "news", "term_group": 0, "term_taxonomy_id": 3,
            "taxonomy": "category", "description": "", "parent": 0, "count": 2, "filter": "raw"},
        4: {"term_id": 4, "name": "集客", "slug": "marketing", "term_group": 0, "term_taxonomy_id": 4,
            "taxonomy": "category", "description": "集客と分析", "parent": 0, "count": 0, "filter": "raw"},
    }  # fmt: skip
    reads: list[list[str]] = []

    def read(argv: list[str]) -> CommandResult:
        assert POLICY.classify_argv(argv).category is PolicyCategory.READ, argv
        reads.append(argv)
        if argv[:2] == ["term", "get"]:
            term = terms.get(int(argv[3]))
            if term is None:
                return CommandResult("", "Error: Term doesn't exist.\n", 1, 1)
            return _json({**term, "url": "https://example.test/category/x/"})
        assert "--hide_empty=0" in argv  # an empty category is listed too
        ids = next(a for a in argv if a.startswith("--include=")).split("=")[1].split(",")
        return _json([terms[int(i)] for i in ids if int(i) in terms])

    gets = [["term", "get", "category", i, "--format=json"] for i in ("3", "4", "9")]
    answers = read_all(gets, read, workers=3)
    assert [r[:3] for r in reads] == [["term", "list", "category"], ["term", "get", "category"]]
    assert [json.loads(a.stdout) for a in answers[:2] if isinstance(a, CommandResult)] == [terms[3], terms[4]]
    assert not answers[2].ok  # type: ignore[union-attr]  # no term 9: its own get says so
