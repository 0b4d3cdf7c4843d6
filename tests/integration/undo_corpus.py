"""The undo corpus: mutating scenarios on the real sandbox WordPress network, and the harness that
runs one (capture → run → record after → plan → revert) and compares dumps of the content tables.

Used by tests/integration/test_undo_corpus.py and bench/undo_capture.py.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from tests.fakes.wordpress import KeptReader, TestWordPress
from wp_agent.executors.port import CommandResult
from wp_agent.models.undo import UndoCapture, UndoPlan
from wp_agent.policy import CommandPolicy, PolicyCategory
from wp_agent.undo.capture import capture_before, record_after
from wp_agent.undo.execute import execute_plan
from wp_agent.undo.plan import RunCommand, build_plan

EN = "--url=https://example.test/en/"
SHOP = "--url=https://example.test/shop/"
POLICY = CommandPolicy()

# Each scenario: the commands of one run, as the model writes them (no leading `wp`).
SCENARIOS: list[list[str]] = [
    # posts: fields, status, trash, create, meta, terms
    *[[f"post update {i} --post_title=新しいタイトル{i}"] for i in (10, 11, 12, 45, 46)],
    *[[f"post update {i} --post_status=publish"] for i in (40, 41, 45)],
    *[[f"post update {i} --post_status=draft"] for i in (10, 18)],
    ["post update 11 '--post_content=<!-- wp:paragraph --><p>書き換えた本文</p><!-- /wp:paragraph -->'"],
    ["post update 12 --post_excerpt=抜粋です --comment_status=closed"],
    ["post update 48 '--post_date=2025-01-01 09:00:00'"],
    ["post update 20 --post_status=private --post_author=1"],
    *[[f"post delete {i}"] for i in (10, 11, 12, 18, 48, 55)],
    ["post update 15 --post_status=trash"],
    ["post create --post_title=新しい下書き --post_status=draft"],
    ["post create --post_title=公開記事 --post_status=publish --post_category=2,3"],
    ["post create --post_title=タグ付き --post_status=publish --tags_input=beginner,tutorial"],
    ['post create --post_title=メタ付き --post_status=draft --meta_input={"subtitle":"副題"}'],
    ["post meta update 45 subtitle 新しい副題"],
    ["post meta add 12 views 10"],
    ["post meta delete 10 views"],
    ["post meta update 10 views 2000"],
    ["post meta delete 46 subtitle"],
    ["post meta add 10 subtitle 二つ目"],
    ["post term add 12 post_tag automation"],
    ["post term remove 10 post_tag beginner"],
    ["post term set 11 category news"],
    ["post term add 45 category news"],
    ["post term remove 45 post_tag generative-ai"],
    # pages
    ["post update 5 --post_title=会社情報"],
    ["post update 6 '--post_content=<!-- wp:paragraph --><p>電話でどうぞ</p><!-- /wp:paragraph -->'"],
    ["post delete 6"],
    ["post create --post_type=page --post_title=採用情報 --post_status=publish"],
    ["post update 5 --post_parent=6"],
    ["post update 2 --menu_order=3"],
    ["post update 3 --post_status=draft"],
    ["post meta add 5 layout wide"],
    # terms
    ["term create category 新カテゴリ --slug=new-cat"],
    ["term create post_tag 新タグ"],
    ["term create category 子カテゴリ --parent=4"],
    ["term update category 2 --name=WP入門"],
    ["term update post_tag 6 --description=はじめての方へ"],
    ["term update category 5 --parent=2"],
    ["term meta add 2 color blue"],
    ["term update category 3 --slug=information"],
    # menus
    ["menu create 新メニュー"],
    ["menu item add-post main-menu 10"],
    ["menu item add-custom main-menu お問い合わせ https://example.test/contact/"],
    ["menu item add-term footer-menu category 2"],
    ["menu item update 62 --title=ブログ一覧"],
    ["menu location assign footer-menu primary"],
    ["menu location remove main-menu primary"],
    ["menu item add-post footer-menu 5 --title=会社"],
    # options
    ["option update blogname 新しいサイト名"],
    ["option update blogdescription 新しいキャッチフレーズ"],
    ["option update posts_per_page 20"],
    ["option update default_comment_status closed"],
    ["option add my_setting 値"],
    ['option add my_json {"a":1,"b":[1,2]} --format=json'],
    ["option update date_format Y/m/d"],
    ["option update start_of_week 0"],
    ["option delete blogdescription"],
    ["option update timezone_string Asia/Tokyo"],
    # users
    ["user update 2 --user_email=hanako.new@example.test"],
    ["user update 3 --display_name=タロウ"],
    ["user set-role 4 author"],
    ["user add-role 3 editor"],
    ["user remove-role 2 editor"],
    ["user create newbie newbie@example.test --role=author"],
    ["user meta update 2 nickname はなちゃん"],
    ["user meta add 4 favorite_color blue"],
    ["user update 4 --user_url=https://yuki.example.test"],
    ["user set-role 3 subscriber"],
    # plugins and themes
    ["plugin deactivate akismet"],
    ["plugin toggle akismet"],
    ["plugin deactivate akismet", "plugin activate akismet"],
    ["theme activate twentytwentytwo"],
    ["theme activate twentytwentythree"],
    ["theme mod set background_color ff0000"],
    # comments
    ["comment approve 3"],
    ["comment unapprove 1"],
    ["comment spam 2"],
    ["comment unspam 4"],
    ["comment trash 5"],
    ["comment untrash 6"],
    ["comment update 5 --comment_content=編集したコメント"],
    ["comment create --comment_post_ID=12 --comment_content=新しいコメント --comment_author=テスト"],
    ["comment delete 2"],
    ["comment approve 3", "comment spam 3"],
    # multisite: sites, and other sites of the network
    ["site archive 2"],
    ["site deactivate 3"],
    ["site spam 3"],
    ["site private 2"],
    ["site create --slug=newsite --title=新しいサイト"],
    [f"post update 1 '--post_title=Hello again' {EN}"],
    [f"option update blogname Shop {SHOP}"],
    [f"post create --post_title=ショップの新着 --post_status=publish {SHOP}"],
    [f"post delete 1 {EN}"],
    # multi-command runs
    ["post update 10 --post_title=改題", "post term add 10 post_tag automation"],
    ["option update blogname A", "option update blogname B"],
    ["post delete 12", "post delete 18"],
    ["user set-role 4 editor", "user update 4 --display_name=ゆきさん"],
    ["comment approve 3", "comment trash 1"],
    ["post update 45 --post_status=publish", "post meta update 45 subtitle 公開版"],
    ["term update category 2 --name=WP", "post term set 12 category 3"],
    ["site archive 2", "site deactivate 3"],
    ["plugin deactivate akismet", "option update blogname 停止中"],
    ["menu item update 61 --title=会社", "menu location remove footer-menu footer"],
    # runs whose commands read different parts of one thing (fields, one meta key, terms, all of it)
    ["post meta update 45 subtitle 途中", "post update 45 --post_title=途中の題", "post meta add 45 likes 5"],
    [
        "post update 45 --post_title=途中の題",
        "post meta delete 45 subtitle",
        "post term add 45 post_tag automation",
    ],
    ["post meta update 10 views 5", "post update 10 --post_status=trash"],
    [
        "post term remove 10 post_tag beginner",
        "post update 10 --post_status=draft",
        "post meta add 10 views 1",
    ],
    ["user update 3 --display_name=途中", "user update 3 --first_name=花子", "user set-role 3 author"],
    ["term update category 2 --description=途中", "term update category 2 --name=途中の名前"],
    # `meta patch` names its action before the object's ID
    [
        'post meta update 45 layout {"width":"wide","sidebar":"left"} --format=json',
        "post meta patch update 45 layout width narrow",
    ],
    ['user meta update 3 prefs {"theme":"dark"} --format=json', "user meta patch insert 3 prefs font large"],
    # not revertible, and said so before they run
    ["post delete 12 --force"],
    ["term delete category 3"],
    ["user update 2 --user_pass=new-password-123"],
    ["menu item delete 61"],
]


@dataclass
class Outcome:
    commands: list[str]
    marked_irreversible: bool
    equal: bool
    plan: UndoPlan | None = None
    failures: list[str] = field(default_factory=list)
    diff: list[str] = field(default_factory=list)
    capture_ms: int = 0
    # Steps the re-read pass after each thing had to add: the API's undo run has no such pass, so
    # there the plan alone must do.
    follow_up_steps: int = 0


def reader(site: TestWordPress, kept: KeptReader | None = None) -> Callable[[list[str]], CommandResult]:
    """The before-image reads: each must be a read for the policy, then runs on the real site (in a
    process of its own, or answered by a kept WP-CLI process)."""

    def read(argv: list[str]) -> CommandResult:
        decision = POLICY.classify_argv(argv)
        assert decision.category is PolicyCategory.READ, (argv, decision.rule)
        if kept is None:
            return run(site, list(decision.argv))
        started = time.perf_counter()
        answer = kept(list(decision.argv))
        elapsed = int((time.perf_counter() - started) * 1000)
        return CommandResult(answer.stdout, answer.stderr, answer.return_code, elapsed)

    return read


def run(site: TestWordPress, argv: Sequence[str]) -> CommandResult:
    started = time.perf_counter()
    done = site.wp(*argv)
    return CommandResult(
        done.stdout, done.stderr, done.returncode, int((time.perf_counter() - started) * 1000)
    )


# -- the dump: content tables of every site, without what the issue says to ignore ---------------

_DROP_COLUMNS = {
    "posts": {"post_modified", "post_modified_gmt"},
    "postmeta": {"meta_id"},
    "commentmeta": {"meta_id"},
    "termmeta": {"meta_id"},
    "usermeta": {"umeta_id"},
    "options": {"option_id"},
    "sitemeta": {"meta_id"},
    "blogmeta": {"meta_id"},
    "blogs": {"last_updated"},
}
_WHERE = {
    "posts": "post_type <> 'revision'",
    "options": "option_name NOT LIKE '\\_transient\\_%' AND option_name NOT LIKE '\\_site\\_transient\\_%' AND option_name <> 'cron'",
    "sitemeta": "meta_key NOT LIKE '\\_site\\_transient\\_%'",
    # when a comment went to the trash: a modification timestamp
    "commentmeta": "meta_key <> '_wp_trash_meta_time'",
}
# The network's sign-up log, not content.
_LOGS = {"registration_log", "signups"}
# An option's autoload by what it does (WordPress 6.6+ writes on/off/auto…, see undo/kind.py).
_EXPRESSIONS = {
    (
        "options",
        "autoload",
    ): "CASE WHEN autoload IN ('yes', 'on', 'auto-on', 'auto') THEN 'yes' ELSE 'no' END",
}


def dump(site: TestWordPress) -> dict[str, list[str]]:
    columns: dict[str, list[str]] = {}
    for table, column in site.sql(
        "SELECT TABLE_NAME, COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() "
        "ORDER BY TABLE_NAME, ORDINAL_POSITION"
    ):
        columns.setdefault(table, []).append(column)
    queries = []
    for table, names in sorted(columns.items()):
        base = table.split("_", 2)[-1] if table.split("_")[1].isdigit() else table.split("_", 1)[1]
        if base in _LOGS:
            continue
        kept = [c for c in names if c not in _DROP_COLUMNS.get(base, set())]
        where = f" WHERE {_WHERE[base]}" if base in _WHERE else ""
        if base == "postmeta":
            where = f" WHERE post_id NOT IN (SELECT ID FROM `{table[: -len('postmeta')]}posts` WHERE post_type = 'revision')"
        select = ", ".join(_EXPRESSIONS.get((base, c), f"`{c}`") for c in kept)
        queries.append(f"SELECT '## {table}'; SELECT {select} FROM `{table}`{where} ORDER BY {select};")
    tables: dict[str, list[str]] = {}
    current = ""
    for row in site.sql("\n".join(queries)):
        line = "\t".join(row)
        if line.startswith("## "):
            current = line[3:]
            tables[current] = []
        else:
            tables[current].append(line)
    return tables


def difference(before: dict[str, list[str]], after: dict[str, list[str]]) -> list[str]:
    lines = []
    for table in sorted(set(before) | set(after)):
        was, now = set(before.get(table, [])), set(after.get(table, []))
        lines += [f"{table} - {row[:160]}" for row in sorted(was - now)]
        lines += [f"{table} + {row[:160]}" for row in sorted(now - was)]
    return lines


def run_scenario(
    site: TestWordPress, commands: list[str], *, workers: int = 4, kept: KeptReader | None = None
) -> Outcome:
    """Run the commands with before-images, then the revert plan; compare the dumps. With `kept`, the
    reads are answered by a kept WP-CLI process (the writes always run in processes of their own)."""
    site.reset()
    before_dump = dump(site)
    read = reader(site, kept)
    outcome = Outcome(commands, marked_irreversible=False, equal=False)
    recorded: list[RunCommand] = []
    for command in commands:
        decision = POLICY.classify(command)
        assert not decision.blocked, (command, decision.reason_ja)
        path, argv = decision.command_path, list(decision.argv)
        capture: UndoCapture = capture_before(path, argv, read, workers=workers)
        outcome.marked_irreversible |= not capture.revertible
        result = run(site, argv)
        record_after(path, argv, capture, result.stdout, read, workers=workers)
        outcome.capture_ms += capture.capture_ms
        recorded.append(RunCommand(command=command, capture=capture))
    plan = build_plan("run_corpus", recorded, read, workers=workers)
    outcome.plan = plan
    for step in plan.steps:
        decision = POLICY.classify_argv(step.argv)
        assert not decision.blocked, (step.argv, decision.reason_ja)
    executed = execute_plan(plan, lambda argv: run(site, argv), read, workers=workers)
    for done in executed.steps:
        if not done.ok:
            outcome.failures.append(
                f"{done.argv}: {done.result.stderr.strip() if done.result else 'not run'}"
            )
    outcome.failures += executed.unsettled_ja
    outcome.follow_up_steps = len(executed.steps) - len(plan.steps)
    after_dump = dump(site)
    site.dirty = True
    outcome.equal = before_dump == after_dump
    if not outcome.equal:
        outcome.diff = difference(before_dump, after_dump)
    return outcome
