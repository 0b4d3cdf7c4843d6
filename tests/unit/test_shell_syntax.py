"""find_shell_hazards: operators only count outside quotes; substitutions also inside double quotes."""

from __future__ import annotations

import pytest

from wp_agent.command_line.shell_syntax import HazardKind, find_shell_hazards


@pytest.mark.parametrize(
    ("command", "kind", "text"),
    [
        ("a;b", HazardKind.OPERATOR, ";"),
        ("a && b", HazardKind.OPERATOR, "&&"),
        ("a || b", HazardKind.OPERATOR, "||"),
        ("a | b", HazardKind.OPERATOR, "|"),
        ("a & b", HazardKind.OPERATOR, "&"),
        ("a > b", HazardKind.OPERATOR, ">"),
        ("a >> b", HazardKind.OPERATOR, ">>"),
        ("a < b", HazardKind.OPERATOR, "<"),
        ("a <(b)", HazardKind.OPERATOR, "<("),
        ("(a)", HazardKind.OPERATOR, "("),
        ("a `b`", HazardKind.SUBSTITUTION, "`"),
        ("a $(b)", HazardKind.SUBSTITUTION, "$("),
        ("a ${b}", HazardKind.SUBSTITUTION, "${"),
        ('a "$(b)"', HazardKind.SUBSTITUTION, "$("),
        ('a "`b`"', HazardKind.SUBSTITUTION, "`"),
        ("a\nb", HazardKind.NEWLINE, "'\\n'"),
        ("a \\; b", HazardKind.ESCAPED_OPERATOR, "\\;"),
        ("a \x1b b", HazardKind.CONTROL_CHARACTER, "'\\x1b'"),
        ("a 'b", HazardKind.UNBALANCED_QUOTE, "'"),
        ('a "b', HazardKind.UNBALANCED_QUOTE, '"'),
        ("a \\", HazardKind.UNBALANCED_QUOTE, "\\"),
    ],
)
def test_hazards_outside_quotes(command: str, kind: HazardKind, text: str) -> None:
    hazards = find_shell_hazards(command)
    assert hazards, command
    assert (hazards[0].kind, hazards[0].text) == (kind, text)


@pytest.mark.parametrize(
    "command",
    [
        "a 'b; c && d | e > f < g'",
        'a "b; c && d | e > f < g"',
        "a '$(b) `c` ${d}'",
        'a "<p>x | y</p>"',
        "a 'line1\nline2'",
        'a "line1\nline2"',
        "a $HOME $1 100$",
        'a "price: $100"',
        "a b=c --d='e f'",
        "a 'it'\\''s'",
    ],
)
def test_data_inside_quotes_is_not_a_hazard(command: str) -> None:
    assert find_shell_hazards(command) == []


def test_nul_is_flagged_even_inside_quotes() -> None:
    assert find_shell_hazards("a 'b\x00c'")[0].kind is HazardKind.CONTROL_CHARACTER
