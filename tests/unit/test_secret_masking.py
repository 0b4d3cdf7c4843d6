"""Secrets never reach the model or a record: masked by key at any depth and by value shape, in
every output format WP-CLI prints, and in the audit, AgentOutput, logs and `wp-agent check`.

The output samples are what WP-CLI 2.10 printed on a real WordPress 6.1 (option values set with
`wp option update … --format=json`, a TOTP seed and session tokens in user meta).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fakes.agent_doubles import RecordingWpCli, ScriptedModel, make_deps, text_reply, tool_reply
from wp_agent.adapters.jsonl_audit import JsonlAuditLog
from wp_agent.agent.ports import InMemorySessionStore, MemoryAuditLog, NoApprovals
from wp_agent.agent.runner import AgentRunner
from wp_agent.agent.tool_output import render_tool_result
from wp_agent.cli.main import main
from wp_agent.executors.port import CommandResult
from wp_agent.log_safety import SecretMaskingFilter
from wp_agent.masking import MASK, mask_argv, mask_command, mask_command_output
from wp_agent.models.agent_io import AgentInput

SECRETS = [
    "PlainMailPw-777",
    "sk_live_51HxYzAbCdEfGhIjKlMn",
    "pk_live_51HxYzAbCdEfGhIjKlMn",
    "JBSWY3DPEHPK3PXP",
    "9f86d081884c7d659a2feaa0c55ad015",
    "LIC-7788-XYZ",
    "cs_client_secret_value",
    "MIIEowIBAAKCAQEA1abc",
]

OUTPUTS = {
    "json at depth": json.dumps(
        {
            "mode": "live",
            "gateways": {"stripe": {"secret_key": SECRETS[1], "publishable_key": SECRETS[2]}},
            "oauth": [{"client_id": "abc", "client_secret": SECRETS[6]}],
            "license": SECRETS[5],
        }
    ),
    "option list json": json.dumps(
        [
            {"option_name": "mailserver_pass", "option_value": SECRETS[0]},
            {"option_name": "blogname", "option_value": "テストサイト"},
        ]
    ),
    "serialized in json": json.dumps(
        [
            {
                "user_id": 1,
                "meta_key": "session_tokens",
                "meta_value": f'a:1:{{s:64:"{SECRETS[4]}";a:1:{{s:10:"expiration";i:1;}}}}',
            },
            {"user_id": 1, "meta_key": "_two_factor_totp_key", "meta_value": SECRETS[3]},
            {"user_id": 1, "meta_key": "nickname", "meta_value": "admin"},
        ]
    ),
    "serialized option": f'a:2:{{s:7:"api_key";s:{len(SECRETS[1])}:"{SECRETS[1]}";s:6:"colour";s:4:"blue";}}',
    "table": "option_name\toption_value\nmailserver_pass\t"
    + SECRETS[0]
    + '\nmy_plugin\ta:1:{s:6:"secret";s:'
    + str(len(SECRETS[5]))
    + ':"'
    + SECRETS[5]
    + '";}\nblogname\tテスト',
    "csv": f"user_id,meta_key,meta_value\n1,_two_factor_totp_key,{SECRETS[3]}\n1,nickname,admin\n",
    "yaml": f"---\n- \n  option_name: mailserver_pass\n  option_value: {SECRETS[0]}\n- \n  option_name: blogname\n  option_value: x\n",
    "yaml quoted serialized": '---\n- \n  option_name: my_plugin\n  option_value: \'a:1:{s:7:"license";s:'
    + str(len(SECRETS[5]))
    + ':"'
    + SECRETS[5]
    + "\";}'\n",
    "var_export": f"array (\n  'license_key' => '{SECRETS[5]}',\n  'smtp' => \n  array (\n    'pass' => '{SECRETS[0]}',\n  ),\n)",
    "pem": f"-----BEGIN RSA PRIVATE KEY-----\n{SECRETS[7]}\nmore\n-----END RSA PRIVATE KEY-----",
    "shapes in prose": f"Webhook configured with {SECRETS[1]} and {SECRETS[2]}",
}


@pytest.mark.parametrize("name", sorted(OUTPUTS))
def test_every_output_format_is_masked(name: str) -> None:
    masked = mask_command_output(OUTPUTS[name])
    assert not [s for s in SECRETS if s in masked], masked
    assert MASK in masked


def test_ordinary_values_survive() -> None:
    masked = mask_command_output(OUTPUTS["option list json"] + "\n")
    assert "テストサイト" in masked
    assert "admin" in mask_command_output(OUTPUTS["serialized in json"])
    assert "blue" in mask_command_output(OUTPUTS["serialized option"])
    assert mask_command_output("Success: Updated 'blogname' option.") == "Success: Updated 'blogname' option."


def test_serialized_values_stay_valid_with_their_byte_lengths() -> None:
    masked = mask_command_output('a:1:{s:6:"secret";s:12:"秘密です";}')
    assert masked == 'a:1:{s:6:"secret";s:3:"***";}'
    nested = mask_command_output('a:1:{s:4:"note";s:10:"é sk_live_";}')
    assert nested.startswith('a:1:{s:4:"note";s:')


_KEYS = st.sampled_from(["api_key", "client_secret", "smtp_password", "token", "license", "private_key"])
_PLAIN = st.sampled_from(["title", "colour", "count", "enabled", "url"])


@st.composite
def _nested_with_secret(draw: st.DrawFn) -> tuple[object, str]:
    secret = "S3cr" + draw(st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789", min_size=8, max_size=12))
    value: object = {draw(_KEYS): secret}
    for _ in range(draw(st.integers(0, 6))):
        value = {draw(_PLAIN): value, "title": "ok"} if draw(st.booleans()) else ["x", value]
    return value, secret


@settings(max_examples=150, deadline=None)
@given(_nested_with_secret(), st.sampled_from(["json", "serialized-in-json", "flag"]))
def test_a_secret_key_at_any_depth_is_masked(case: tuple[object, str], form: str) -> None:
    document, secret = case
    text = json.dumps(document)
    if form == "serialized-in-json":
        text = json.dumps({"meta_value": f's:{len(text)}:"{text}";', "meta_key": "x"})
    if form == "flag":
        assert secret not in " ".join(mask_argv(["post", "create", f"--meta_input={text}"]))
        return
    assert secret not in mask_command_output(text)


@pytest.mark.parametrize(
    ("command", "secret"),
    [
        ("option update mailserver_pass PlainMailPw-777", "PlainMailPw-777"),
        ("option set SMTP_PASSWORD 'two words'", "two words"),
        ("option patch update my_settings stripe secret_key sk_live_abcdef123", "sk_live_abcdef123"),
        ('option update my_settings \'{"api_key":"AbCdEf123456"}\' --format=json', "AbCdEf123456"),
        ("user meta update 1 _stripe_token tok_123456789", "tok_123456789"),
        ("user update 1 --user_pass=Secret-99", "Secret-99"),
        ("user update 1 --user_pass Secret-99", "Secret-99"),
        ("user session destroy 1 0123456789abcdef", "0123456789abcdef"),
        ("media import https://bob:hunter22@example.com/a.jpg", "hunter22"),
    ],
)
def test_commands_are_masked(command: str, secret: str) -> None:
    assert secret not in mask_command(command)


@pytest.mark.parametrize(
    "command", ["user update 1 --user_pass=Secret-99", "option update mailserver_pass PlainMailPw-777"]
)
@pytest.mark.parametrize("flag", [[], ["--json"]])
def test_check_never_echoes_a_secret(
    capsys: pytest.CaptureFixture[str], command: str, flag: list[str]
) -> None:
    main(["check", *flag, "--", command])
    out = capsys.readouterr().out
    assert "Secret-99" not in out
    assert "PlainMailPw-777" not in out


def test_log_records_are_masked() -> None:
    record = logging.LogRecord("x", logging.INFO, "f", 1, "output %s", (OUTPUTS["json at depth"],), None)
    record.__dict__["stdout"] = OUTPUTS["table"]
    SecretMaskingFilter().filter(record)
    shown = record.getMessage() + json.dumps(record.__dict__["stdout"])
    assert not [s for s in SECRETS if s in shown]


def test_the_model_never_sees_a_secret() -> None:
    for text in OUTPUTS.values():
        sent = render_tool_result(command="option get x", exit_code=0, stdout=text, stderr=text)
        assert not [s for s in SECRETS if s in sent], sent


def test_a_run_keeps_secrets_out_of_the_audit_output_and_views() -> None:
    answers = {
        "option update": CommandResult("Success: Updated 'mailserver_pass' option.\n", "", 0, 1),
        "option get": CommandResult(OUTPUTS["json at depth"], "", 0, 1),
        "user meta": CommandResult(OUTPUTS["serialized in json"], "", 0, 1),
        "option list": CommandResult(OUTPUTS["yaml"], "", 0, 1),
    }

    def handler(argv: list[str]) -> CommandResult:
        # The site's facts read secret-laden answers too (`option get`; the rest answer the same).
        return answers.get(" ".join(argv[:2]), answers["option get"])

    model = ScriptedModel(
        [
            tool_reply(
                "option update mailserver_pass PlainMailPw-777",
                "option get my_plugin_settings --format=json",
                "user meta list 1 --format=json",
                "option list --format=yaml",
            ),
            text_reply("設定しました。SMTPのパスワードは PlainMailPw-777 です"),
        ]
    )
    store = InMemorySessionStore()
    deps = make_deps(model, RecordingWpCli(handler), store=store)
    output = AgentRunner(deps, NoApprovals()).run(AgentInput(message="SMTPを設定して"))
    assert isinstance(deps.audit, MemoryAuditLog)
    records = [
        output.to_json(),
        *(event.model_dump_json() for event in deps.audit.events),
        json.dumps(model.last_tool_results(), ensure_ascii=False),
        json.dumps(model.calls[0], ensure_ascii=False),  # the site's facts in the first request
    ]
    state = store.load(next(iter(store._states)))
    assert state is not None
    # What the session stores of each command: its masked text and the site's masked answers.
    records += [r.model_dump_json(exclude={"argv"}) for r in state.commands]
    leaked = [s for s in SECRETS if any(s in r for r in records)]
    assert leaked == []


def test_the_audit_file_never_holds_a_secret(tmp_path: Path) -> None:
    model = ScriptedModel(
        [
            tool_reply(
                "option update mailserver_pass PlainMailPw-777", "user update 1 --user_pass=Secret-99"
            ),
            text_reply("ok"),
        ]
    )
    deps = make_deps(model, RecordingWpCli(), agent_allow_skip_confirmation=True)
    deps.audit = JsonlAuditLog(tmp_path / "audit.jsonl")
    output = AgentRunner(deps, NoApprovals()).run(AgentInput(message="x", skip_destructive_confirmation=True))
    written = (tmp_path / "audit.jsonl").read_text(encoding="utf-8")
    assert "option update mailserver_pass ***" in written
    for secret in ("PlainMailPw-777", "Secret-99"):
        assert secret not in written
        assert secret not in output.to_json()
