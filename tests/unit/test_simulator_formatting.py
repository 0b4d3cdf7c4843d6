"""WP-CLI output formats reproduced by the simulator (json, csv, yaml, tables, ids, count)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fakes.simulator_fixtures import SimSite
from wp_agent.simulator.formatting import (
    ascii_table,
    csv_line,
    display_width,
    php_json,
    php_serialize,
    spyc_dump,
    tabular_row,
    var_export,
)


@pytest.fixture
def site(tmp_path: Path) -> SimSite:
    return SimSite.create(tmp_path)


def test_php_json_escapes_slashes_and_non_ascii() -> None:
    assert php_json({"url": "https://example.test/a", "title": "記事"}) == (
        '{"url":"https:\\/\\/example.test\\/a","title":"\\u8a18\\u4e8b"}'
    )


def test_csv_quotes_like_fputcsv_and_defuses_formulas() -> None:
    assert csv_line(["ID", "Hello world", 'say "hi"', "=SUM(A1)", None, True]) == (
        'ID,"Hello world","say ""hi""",\'=SUM(A1),,1\n'
    )


def test_yaml_matches_spyc_dump() -> None:
    dumped = spyc_dump([{"ID": 45, "post_title": "下書き", "post_name": "", "slug": "123", "flag": "yes"}])
    assert (
        dumped == '---\n- \n  ID: 45\n  post_title: 下書き\n  post_name: ""\n  slug: "123"\n  flag: \'yes\'\n'
    )


def test_var_export_of_nested_arrays() -> None:
    assert (
        var_export(["a", {"k": True}])
        == "array (\n  0 => 'a',\n  1 => \n  array (\n    'k' => true,\n  ),\n)"
    )


def test_php_serialize_counts_bytes() -> None:
    assert php_serialize(["記事"]) == 'a:1:{i:0;s:6:"記事";}'


def test_east_asian_characters_are_two_columns_wide() -> None:
    assert display_width("AI活用") == 6


def test_ascii_table_layout() -> None:
    lines = ascii_table(["ID", "post_title"], [["45", "下書き"]], columns=80)
    assert lines == [
        "+----+------------+",
        "| ID | post_title |",
        "+----+------------+",
        "| 45 | 下書き     |",
        "+----+------------+",
    ]


def test_tabular_row_when_piped() -> None:
    assert tabular_row(["45", "a\tb", ""]) == "45\ta    b"


def test_post_list_is_tab_separated_when_piped(site: SimSite) -> None:
    result = site.wp("post", "list", "--post_status=draft", "--fields=ID,post_status")
    assert result.stdout == "ID\tpost_status\n46\tdraft\n45\tdraft\n41\tdraft\n40\tdraft\n"


def test_post_list_is_an_ascii_table_on_a_terminal(site: SimSite) -> None:
    result = site.wp("post", "list", "--post_status=draft", "--fields=ID,post_status", tty=True)
    assert result.stdout.splitlines()[:4] == [
        "+----+-------------+",
        "| ID | post_status |",
        "+----+-------------+",
        "| 46 | draft       |",
    ]


def test_shell_pipe_zero_forces_ascii_tables(site: SimSite) -> None:
    result = site.wp("post", "list", "--post__in=45", "--fields=ID", env={"SHELL_PIPE": "0"})
    assert result.stdout == "+----+\n| ID |\n+----+\n| 45 |\n+----+\n"


def test_ids_and_count_have_no_trailing_newline(site: SimSite) -> None:
    assert site.wp("post", "list", "--post_status=draft", "--format=ids").stdout == "46 45 41 40"
    assert site.wp("post", "list", "--post_status=draft", "--format=count").stdout == "4"


def test_json_list_output(site: SimSite) -> None:
    result = site.wp("post", "list", "--post__in=45", "--format=json")
    assert not result.stdout.endswith("\n")
    assert json.loads(result.stdout) == [
        {
            "ID": 45,
            "post_title": "AIで変わるコンテンツ制作の未来",
            "post_name": "",
            "post_date": "2024-08-01 10:00:00",
            "post_status": "draft",
        }
    ]
    assert "\\u" in result.stdout


def test_single_item_json_ends_with_newline(site: SimSite) -> None:
    result = site.wp("post", "get", "45", "--fields=ID,post_status,url", "--format=json")
    assert result.stdout == '{"ID":45,"post_status":"draft","url":"https:\\/\\/example.test\\/?p=45"}\n'


def test_fields_accept_the_prefix_shorthand(site: SimSite) -> None:
    result = site.wp("post", "list", "--post__in=1", "--fields=ID,title", "--format=csv")
    assert result.stdout == 'ID,post_title\n1,"Argo Note へようこそ"\n'


def test_single_field_prints_one_value_per_line(site: SimSite) -> None:
    assert site.wp("post", "list", "--post_status=draft", "--field=ID").stdout == "46\n45\n41\n40\n"


def test_item_table_is_field_value_rows(site: SimSite) -> None:
    result = site.wp("post", "get", "1", "--fields=ID,post_name")
    assert result.stdout == "Field\tValue\nID\t1\npost_name\twelcome\n"


def test_yaml_format(site: SimSite) -> None:
    result = site.wp("post", "list", "--post__in=1", "--fields=ID,post_status", "--format=yaml")
    assert result.stdout == "---\n- \n  ID: 1\n  post_status: publish\n"


def test_unknown_field_and_format_errors(site: SimSite) -> None:
    unknown_field = site.wp("post", "list", "--fields=ID,nope")
    assert (unknown_field.exit_code, unknown_field.stderr) == (1, "Error: Invalid field: nope.\n")
    bad_format = site.wp("post", "list", "--format=xml")
    assert bad_format.exit_code == 1
    assert bad_format.stderr == (
        "Error: Parameter errors:\n Invalid value specified for 'format' (Render output in a particular format.)\n"
    )
