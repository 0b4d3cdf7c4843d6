"""Name/value rows (`Field`+`Value`, `option_name`+`option_value`, …) are masked by the row a value
is in, whatever the format and the column order: a red team found `wp post get 12 --format=csv`
(WP-CLI's `Field,Value` layout) unmasked, and YAML with the value before the name masking the next
row's value instead of its own."""

from __future__ import annotations

import pytest

from wp_agent.masking import MASK, mask_command_output

SECRET = "Hunter2Secret"


def test_csv_field_value_layout_masks_the_secret_row() -> None:
    text = f"Field,Value\nID,12\npost_password,{SECRET}\npost_title,Hello\n"
    masked = mask_command_output(text)
    assert SECRET not in masked
    assert masked == f"Field,Value\nID,12\npost_password,{MASK}\npost_title,Hello\n"


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
