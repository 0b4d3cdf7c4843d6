"""Name/value rows (`Field`+`Value`, `option_name`+`option_value`, …) are masked by the row a value
is in, whatever the format and the column order: a red team found `wp post get 12 --format=csv`
(WP-CLI's `Field,Value` layout) unmasked, and YAML with the value before the name masking the next
row's value instead of its own."""

from __future__ import annotations

import csv
import io
import json

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from wp_agent.masking import MASK, mask_command_output

SECRET = "Hunter2Secret"


def test_csv_field_value_layout_masks_the_secret_row() -> None:
    text = f"Field,Value\nID,12\npost_password,{SECRET}\npost_title,Hello\n"
    masked = mask_command_output(text)
    assert SECRET not in masked
    assert masked == f"Field,Value\nID,12\npost_password,{MASK}\npost_title,Hello\n"


def test_yaml_value_before_name_masks_its_own_item() -> None:
    text = (
        "---\n"
        "- option_value: SmtpPw_Real_7781\n"
        "  option_name: mailserver_pass\n"
        '- option_value: "110"\n'
        "  option_name: mailserver_port\n"
    )
    masked = mask_command_output(text)
    assert "SmtpPw_Real_7781" not in masked
    assert '"110"' in masked


def test_yaml_as_wp_cli_prints_it_value_first() -> None:
    # WP-CLI (Spyc) opens each list item with a line of its own.
    text = (
        "---\n"
        "- \n"
        "  option_value: SmtpPw_Real_7781\n"
        "  option_name: mailserver_pass\n"
        "- \n"
        '  option_value: "110"\n'
        "  option_name: mailserver_port\n"
    )
    masked = mask_command_output(text)
    assert "SmtpPw_Real_7781" not in masked
    assert '"110"' in masked


@pytest.mark.parametrize(
    "value",
    [
        '"SmtpPw_Real_7781"',
        "'SmtpPw_Real_7781'",
        "|\n    SmtpPw_Real_7781\n    second: SmtpPw_Real_7781",
        ">-\n    SmtpPw_Real_7781\n    folded",
        '"SmtpPw_Real_7781\n    option_name: blogname\n  option_name: blogname"',
        "'it''s SmtpPw_Real_7781\n  - option_name: blogname'",
        "\n    host: smtp.example.com\n    password_hint:\n      - SmtpPw_Real_7781",
    ],
)
@pytest.mark.parametrize("value_first", [True, False])
@pytest.mark.parametrize("item_line", [True, False])
def test_yaml_pairs_by_item_whatever_the_value_looks_like(
    value: str, value_first: bool, item_line: bool
) -> None:
    def item(name: str, shown: str) -> str:
        entries = [f"option_value: {shown}", f"option_name: {name}"]
        if not value_first:
            entries.reverse()
        if item_line:  # Spyc's `- ` line of its own, then the entries
            return "- \n" + "".join(f"  {e}\n" for e in entries)
        return f"- {entries[0]}\n  {entries[1]}\n"

    text = (
        "---\n" + item("blogname", "My Blog") + item("mailserver_pass", value) + item("admin_email", "a@b.c")
    )
    masked = mask_command_output(text)
    assert "SmtpPw_Real_7781" not in masked
    assert "My Blog" in masked
    assert "a@b.c" in masked
    parsed = yaml.safe_load(masked)
    assert [row["option_name"] for row in parsed] == ["blogname", "mailserver_pass", "admin_email"]
    assert parsed[1]["option_value"] == MASK


def test_yaml_nested_rows_and_keys_are_masked_at_their_level() -> None:
    text = (
        "gateways:\n"
        "  - key: stripe_secret\n"
        "    settings:\n"
        "      mode: live\n"
        "    value: sk_test_abcdefgh\n"
        "  - key: mode\n"
        "    value: live\n"
        "smtp:\n"
        "  host: smtp.example.com\n"
        "  password: Pw_Nested_1\n"
    )
    masked = mask_command_output(text)
    assert "sk_test_abcdefgh" not in masked
    assert "Pw_Nested_1" not in masked
    assert yaml.safe_load(masked)["gateways"][1] == {"key": "mode", "value": "live"}


@pytest.mark.parametrize(
    "header",
    [
        ("Field", "Value"),
        ("Value", "Field"),
        ("key", "value"),
        ("option_name", "option_value"),
        ("option_value", "option_name"),
        ("meta_key", "meta_value"),
        ("name", "value"),
    ],
)
@pytest.mark.parametrize("separator", [",", "\t"])
def test_name_value_tables_in_any_column_order(header: tuple[str, str], separator: str) -> None:
    name_first = _role(header[0]) in {"field", "key", "option_name", "meta_key", "name"}

    def row(name: str, value: str) -> str:
        return separator.join((name, value) if name_first else (value, name))

    text = "\n".join([separator.join(header), row("ID", "12"), row("smtp_pass", SECRET), row("title", "Hi")])
    masked = mask_command_output(text)
    assert SECRET not in masked
    assert row("smtp_pass", MASK) in masked
    assert row("title", "Hi") in masked


def _role(column: str) -> str:
    return column.casefold()


def test_csv_with_extra_columns_masks_only_the_value_cell() -> None:
    text = f"user_id,meta_value,umeta_id,meta_key\n1,{SECRET},7,session_tokens\n1,admin,8,nickname\n"
    masked = mask_command_output(text)
    assert masked == f"user_id,meta_value,umeta_id,meta_key\n1,{MASK},7,session_tokens\n1,admin,8,nickname\n"


def test_csv_quoted_multi_line_cell_is_masked_whole() -> None:
    text = f'Field,Value\npost_password,"{SECRET}\nsecond line, {SECRET}2"\npost_title,"a\nb"\n'
    masked = mask_command_output(text)
    assert SECRET not in masked
    assert f"post_password,{MASK}\n" in masked
    assert 'post_title,"a\nb"' in masked


@pytest.mark.parametrize("separator", [",", "\t"])
def test_headerless_name_value_rows_do_not_leak(separator: str) -> None:
    first_row_secret = f"post_password{separator}{SECRET}\npost_title{separator}Hello\n"
    assert SECRET not in mask_command_output(first_row_secret)
    later_row_secret = f"ID{separator}12\npost_password{separator}{SECRET}\npost_title{separator}Hello\n"
    masked = mask_command_output(later_row_secret)
    assert SECRET not in masked
    assert f"post_title{separator}Hello" in masked


def test_headerless_csv_with_a_quoted_multi_line_value_does_not_leak() -> None:
    text = f'ID,12\npost_password,"{SECRET}\n{SECRET}-2\n"\npost_title,Hello\n'
    masked = mask_command_output(text)
    assert SECRET not in masked
    assert "post_title,Hello" in masked


@pytest.mark.parametrize(
    "text",
    [
        # newer WP-CLI: a value's further lines as rows whose other cells are empty
        f"Field\tValue\npost_password\t{SECRET}\n\t{SECRET}-2\npost_title\tHello",
        # older WP-CLI: the value's newline printed raw
        f"Field\tValue\npost_password\t{SECRET}\n{SECRET}-2\npost_title\tHello",
        f"option_value\toption_name\n{SECRET}\n{SECRET}-2\tmailserver_pass\nHello\tblogname",
    ],
)
def test_tab_separated_multi_line_values_are_masked_with_their_row(text: str) -> None:
    masked = mask_command_output(text)
    assert SECRET not in masked
    assert "Hello" in masked


def test_json_rows_with_the_value_first_in_any_case() -> None:
    text = json.dumps([{"Value": SECRET, "Field": "post_password"}, {"Value": "12", "Field": "ID"}])
    masked = mask_command_output(text)
    assert json.loads(masked) == [{"Value": MASK, "Field": "post_password"}, {"Value": "12", "Field": "ID"}]


# PHP prints `=> ` (trailing space) before a nested array.
VAR_EXPORT = """array (
  0 =>
  array (
    'option_value' => 'SecretV1 it\\'s
),
    \\'fake\\' => 1,',
    'option_name' => 'mailserver_pass',
  ),
  1 =>
  array (
    'key' => 'api_token',
    'value' =>
    array (
      'x' => 'SecretNested',
    ),
  ),
  2 =>
  array (
    'password' => 12345678,
    'enabled' => true,
    'name' => 'blogname',
    'value' => 'Keep',
    'data' => '{"api_key":"SecretInJson"}',
  ),
  'obj' =>
  (object) array(
     'smtp_pass' =>
    array (
      0 => 'SecretInObj',
    ),
     'host' => 'smtp.example.com',
  ),
)""".replace("=>\n", "=> \n")


def test_var_export_rows_nested_values_and_scalars_under_secret_keys() -> None:
    masked = mask_command_output(VAR_EXPORT)
    assert "Secret" not in masked
    assert "12345678" not in masked
    assert "'value' => 'Keep'," in masked
    assert "'host' => 'smtp.example.com'," in masked
    assert "'enabled' => true," in masked
    assert masked.count(f"'{MASK}'") == 4
    assert f"'data' => '{{\"api_key\":\"{MASK}\"}}'," in masked


# -- property: any name/value layout, any column order, any format ----------------------------------

_LAYOUTS = [
    ("option_name", "option_value"),
    ("meta_key", "meta_value"),
    ("key", "value"),
    ("Field", "Value"),
    ("name", "value"),
]
_SECRET_NAMES = ["mailserver_pass", "post_password", "user_pass", "_two_factor_totp_key", "stripe_secret_key"]
_PLAIN_NAMES = ["blogname", "ID", "post_title", "nickname", "mailserver_port"]
# Text around the secret: quotes, separators, YAML indicators, newlines and tabs (no capital S, so
# it never spells the secret's marker).
_NOISE = st.text(alphabet="abc xyz,;:#-|>'\"{}[]\n\t=*&!%@0", max_size=24)
_TOKEN = st.text(alphabet="abcdefghijkmnopqrstuvwxyz23456789", min_size=10, max_size=14).map("S3cr".__add__)


class _SpycLikeDumper(yaml.SafeDumper):
    """Writes every value in one scalar style (plain, quoted, `|`, `>`), keys plain."""

    value_style: str | None = None


def _represent_str(dumper: _SpycLikeDumper, data: str) -> yaml.ScalarNode:
    style = None if data in _HEADER_NAMES else dumper.value_style
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_HEADER_NAMES = {name for layout in _LAYOUTS for name in layout} | {"autoload", "user_id"}
_SpycLikeDumper.add_representer(str, _represent_str)


def _as_yaml(rows: list[dict[str, str]], style: str | None, item_line: bool) -> str:
    dumper = type("Dumper", (_SpycLikeDumper,), {"value_style": style})
    out = ["---"]
    for row in rows:
        entries = yaml.dump(row, Dumper=dumper, sort_keys=False, allow_unicode=True, width=1000)
        lines = ["  " + line for line in entries.rstrip("\n").split("\n")]
        if item_line:
            out += ["- ", *lines]
        else:
            out += ["- " + lines[0][2:], *lines[1:]]
    return "\n".join(out) + "\n"


def _as_table(columns: list[str], rows: list[dict[str, str]]) -> str:
    """As WP-CLI's Tabular renderer prints a table without a terminal: tabs in values become four
    spaces, and the further lines of the last column's value become rows of their own."""
    out = ["\t".join(columns)]
    for row in rows:
        cells = [row[c].replace("\t", "    ") for c in columns]
        further = cells[-1].splitlines()[1:] if cells[-1] else []
        out.append("\t".join((c.splitlines() or [""])[0] for c in cells))
        out += ["\t" * (len(columns) - 1) + line for line in further]
    return "\n".join(out)


def _as_csv(columns: list[str], rows: list[dict[str, str]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows([row[c] for c in columns] for row in rows)
    return buffer.getvalue()


@st.composite
def _name_value_output(draw: st.DrawFn) -> tuple[str, str, str]:
    """(output, secret marker, a plain value that must survive)."""
    name_column, value_column = draw(st.sampled_from(_LAYOUTS))
    extra = draw(st.lists(st.sampled_from(["autoload", "user_id"]), unique=True))
    columns = draw(st.permutations([name_column, value_column, *extra]))
    token = draw(_TOKEN)
    secret_value = draw(_NOISE) + token + draw(_NOISE)
    kept = "Keep" + str(draw(st.integers(0, 9999)))
    names = draw(st.lists(st.sampled_from(_PLAIN_NAMES), min_size=1, max_size=3, unique=True))
    rows = [{name_column: n, value_column: draw(_NOISE) or "x"} for n in names]
    secret_at = draw(st.integers(0, len(rows)))
    rows.insert(secret_at, {name_column: draw(st.sampled_from(_SECRET_NAMES)), value_column: secret_value})
    # Before the secret row: the prose pattern reads `post_password⏎Keep1` as a password written
    # in prose and hides it (on purpose: it errs on hiding).
    rows.insert(draw(st.integers(0, secret_at)), {name_column: "blogname", value_column: kept})
    for row in rows:
        row.update({column: draw(st.sampled_from(["yes", "1", "on"])) for column in extra})
    rows = [{c: row[c] for c in columns} for row in rows]
    form = draw(st.sampled_from(["json", "csv", "yaml", "table"]))
    if form == "json":
        return json.dumps(rows, ensure_ascii=False), token, kept
    if form == "csv":
        return _as_csv(columns, rows), token, kept
    if form == "table":
        return _as_table(columns, rows), token, kept
    style = draw(st.sampled_from([None, "'", '"', "|", ">"]))
    return _as_yaml(rows, style, item_line=draw(st.booleans())), token, kept


@settings(max_examples=400, deadline=None)
@given(_name_value_output())
def test_a_secret_rows_value_never_shows_in_any_format(case: tuple[str, str, str]) -> None:
    output, token, kept = case
    masked = mask_command_output(output)
    assert token not in masked
    assert kept in masked
