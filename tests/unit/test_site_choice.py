"""Which site a command works on (cli/site_choice.py) and how a named site is kept (cli/site_book.py):
--site, WP_AGENT_SITE, the remembered place of a held or undone run, the environment, the default —
and the line that says which one won."""

from __future__ import annotations

import argparse
import json
import os
import stat
from pathlib import Path

import pytest

from wp_agent.cli import failures, site_book, site_choice
from wp_agent.cli.exit_codes import ExitCode
from wp_agent.config import CliSettings, WpCliMode
from wp_agent.errors import ConfigurationError


@pytest.fixture(autouse=True)
def home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    for name in (*site_book.CONNECTION_VARIABLES, site_choice.SITE_VARIABLE):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def local_site(name: str, path: Path) -> site_book.NamedSite:
    path.mkdir(exist_ok=True)
    return site_book.NamedSite(name=name, kind="local", wp_path=str(path), added_at="2026-01-01T00:00:00Z")


def ssh_site(name: str) -> site_book.NamedSite:
    return site_book.NamedSite(
        name=name, kind="ssh", wp_path="/var/www/wordpress", host="wp.example.test", port=2222, user="wpagent",
        key_path="/home/me/.ssh/id_ed25519", host_key="ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDbe",
        added_at="2026-01-01T00:00:00Z",
    )  # fmt: skip


def keep(*sites: site_book.NamedSite, default: str | None = None) -> None:
    with site_book.changing() as book:
        for site in sites:
            book.sites[site.name] = site
        book.default = default


def command(site: str | None = None, remembered: str | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    site_choice.add_site_option(parser, remembered=(lambda _a, _s: remembered) if remembered else None)
    return parser.parse_args(["--site", site] if site else [])


def test_the_book_is_private_and_holds_paths_not_keys(home: Path) -> None:
    keep(ssh_site("blog"), default="blog")
    path = home / ".config" / "wp-agent" / "sites.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    stored = json.loads(path.read_text())
    assert stored["sites"]["blog"]["keyPath"] == "/home/me/.ssh/id_ed25519"
    assert site_book.load().default == "blog"


def test_xdg_config_home_decides_where_the_book_is(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    keep(ssh_site("blog"))
    assert (tmp_path / "xdg" / "wp-agent" / "sites.json").is_file()


def test_a_book_others_can_write_is_refused(home: Path) -> None:
    keep(ssh_site("blog"))
    (home / ".config" / "wp-agent" / "sites.json").chmod(0o666)
    with pytest.raises(ConfigurationError, match="chmod 600"):
        site_book.load()


def test_a_site_sets_every_connection_variable_and_clears_the_rest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VPS_SSH_KEY_SECRET_ARN", "arn:aws:secretsmanager:ap-northeast-1:1:secret:x")
    monkeypatch.setenv("WP_CLI_BIN", "php /elsewhere/wp-cli.phar")
    settings = site_book.settings_with(CliSettings, ssh_site("blog").environment())
    assert settings.wp_cli_mode is WpCliMode.SSH
    assert (settings.vps_host, settings.vps_port, settings.vps_ssh_user) == (
        "wp.example.test",
        2222,
        "wpagent",
    )
    assert settings.vps_ssh_key_secret_arn is None  # the environment's other key source does not mix in
    assert settings.wp_cli_bin == "wp"
    assert site_book.target_of(settings) == "ssh:wpagent@wp.example.test:2222/var/www/wordpress"


def test_without_anything_the_sandbox_is_used() -> None:
    choice = site_choice.choose(command(), environ={})
    assert choice.settings.wp_cli_mode is WpCliMode.SANDBOX
    assert (choice.site, choice.notice) == (None, None)


def test_the_default_site_is_used_when_the_environment_names_no_place(tmp_path: Path) -> None:
    keep(local_site("shop", tmp_path / "shop"), ssh_site("blog"), default="shop")
    choice = site_choice.choose(command(), environ={})
    assert choice.site is not None
    assert (choice.site.name, choice.source, choice.notice) == ("shop", "default", None)
    assert choice.settings.wp_local_path == tmp_path / "shop"


def test_the_environment_wins_over_the_default_site_and_says_so(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    keep(local_site("shop", tmp_path / "shop"), default="shop")
    monkeypatch.setenv("WP_CLI_MODE", "sandbox")
    choice = site_choice.choose(command(), environ=dict(os.environ))
    assert choice.site is None
    assert choice.notice == (
        "環境変数 WP_CLI_MODE の接続設定を使います（既定のサイト「shop」は使いません。使うときは --site shop）。"
    )


def test_many_variables_are_named_three_and_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    keep(ssh_site("blog"), default="blog")
    for name, value in {"WP_CLI_MODE": "ssh", "VPS_HOST": "h", "VPS_PORT": "22", "VPS_SSH_USER": "u",
                        "WP_PATH": "/w"}.items():  # fmt: skip
        monkeypatch.setenv(name, value)
    choice = site_choice.choose(command(), environ=dict(os.environ))
    assert choice.notice is not None
    assert choice.notice.startswith("環境変数 WP_CLI_MODE、VPS_HOST、VPS_PORT ほか2つの接続設定を使います（")


def test_site_and_wp_agent_site_win_over_the_environment_and_say_so(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    keep(local_site("shop", tmp_path / "shop"), ssh_site("blog"), default="shop")
    monkeypatch.setenv("WP_CLI_MODE", "sandbox")
    monkeypatch.setenv(site_choice.SITE_VARIABLE, "blog")
    by_variable = site_choice.choose(command(), environ=dict(os.environ))
    assert by_variable.site is not None
    assert by_variable.site.name == "blog"
    assert by_variable.notice is not None
    assert by_variable.notice.startswith(
        "WP_AGENT_SITE で指定したサイト「blog」を使います（環境変数 WP_CLI_MODE"
    )
    by_flag = site_choice.choose(command("shop"), environ=dict(os.environ))
    assert by_flag.site is not None
    assert by_flag.site.name == "shop"  # --site before WP_AGENT_SITE


def test_an_unknown_site_is_a_usage_error_by_flag_and_a_configuration_error_by_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    keep(ssh_site("blog"))
    with pytest.raises(failures.CliError) as flag:
        site_choice.choose(command("nope"), environ={})
    assert (flag.value.exit_code, flag.value.code) == (ExitCode.USAGE, "SITE_NOT_REGISTERED")
    assert "登録済み: blog" in flag.value.message_ja
    with pytest.raises(failures.CliError) as variable:
        site_choice.choose(command(), environ={site_choice.SITE_VARIABLE: "nope"})
    assert variable.value.exit_code == ExitCode.CONFIGURATION


def test_a_held_run_continues_on_its_own_site_without_repeating_settings(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    keep(local_site("shop", tmp_path / "shop"), ssh_site("blog"), default="shop")
    target = "ssh:wpagent@wp.example.test:2222/var/www/wordpress"
    choice = site_choice.choose(command(remembered=target), environ={})
    assert choice.site is not None
    assert (choice.site.name, choice.source, choice.notice) == ("blog", "remembered", None)
    monkeypatch.setenv("WP_LOCAL_PATH", str(tmp_path))
    said = site_choice.choose(command(remembered=target), environ=dict(os.environ))
    assert (
        said.notice
        == "この処理を実行したサイト「blog」で続けます（環境変数 WP_LOCAL_PATH の接続設定は使いません）。"
    )


def test_a_held_run_of_the_environments_place_stays_with_the_environment(tmp_path: Path) -> None:
    keep(local_site("shop", tmp_path / "shop"), default="shop")
    sandbox = site_book.target_of(CliSettings())
    choice = site_choice.choose(command(remembered=sandbox), environ={})
    assert choice.site is None  # not the default site: the run was held on the sandbox
    assert choice.settings.wp_cli_mode is WpCliMode.SANDBOX


def test_commands_without_a_site_option_never_take_the_default_site(tmp_path: Path) -> None:
    keep(local_site("shop", tmp_path / "shop"), default="shop")
    choice = site_choice.choose(argparse.Namespace(), environ={})  # e.g. eval, sandbox, check
    assert choice.settings.wp_cli_mode is WpCliMode.SANDBOX


def test_a_fix_for_a_named_site_names_its_options_not_the_variables() -> None:
    site = ssh_site("blog")
    fix = site.in_site_terms(
        "SSH秘密鍵ファイル（x）を読めません。VPS_SSH_KEY_PATH とファイルの権限を確認してください。"
    )
    assert fix.startswith("SSH秘密鍵ファイル（x）を読めません。--key とファイルの権限を確認してください。")
    assert "sites add blog --replace" in fix
    assert site.in_site_terms("ネットワークを確認してください。") == "ネットワークを確認してください。"


def test_ask_on_a_named_site_whose_key_file_is_gone_says_so_in_the_sites_terms(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from wp_agent.cli.main import main

    keep(ssh_site("blog"), default="blog")  # its key file does not exist on this machine
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")  # never reached: refused before
    assert main(["ask", "投稿一覧"]) == ExitCode.CONFIGURATION
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("設定エラー [CONFIGURATION_ERROR]: SSH秘密鍵: 読み込めません。")
    assert "--key とファイルの権限" in line
    assert "VPS_SSH_KEY_PATH" not in line
