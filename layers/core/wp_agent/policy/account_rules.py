"""Accounts and privileges, judged by their effect on a real site.

Decisions (README, "The policy"):
- Granting rights needs the requester's approval: creating or promoting a user to a role that can
  publish or more (author, editor, administrator, and any role not known to stay below that), every
  role change of an existing user, email and password changes, marking a user spam.
- Raw writes of privilege or secret user meta (`*capabilities`, `*user_level`, session tokens,
  activation keys, 2FA material, application passwords) are refused in any table prefix: the
  proper commands (`user set-role`, `user session destroy`, `user reset-password`) exist and go
  through approval. Reading them is refused too (`user get <id> --field=roles` shows roles).
- `user update` passes every flag to wp_update_user(), which also writes user_activation_key: a
  password-reset takeover. Only the profile fields below are accepted; everything else is refused.
- Role definitions are never changed by the agent: `role create|delete|reset`, `cap add|remove`,
  `user add-cap` and writes of the `*user_roles` option are refused (hard blocks in
  command_table.py), and so is `super-admin add`; `super-admin remove` and `user remove-cap` need
  approval.
"""

from __future__ import annotations

from wp_agent.command_line.parsed_command import ParsedCommand
from wp_agent.masking.secret_names import folded, is_privilege_key, is_secret_key
from wp_agent.policy.categories import PolicyCategory
from wp_agent.policy.rule import NETWORK_OPTION_WRITES, OPTION_WRITES, Verdict, argument_rule, written_option

B = PolicyCategory.BLOCKED
D = PolicyCategory.DESTRUCTIVE

# Roles that cannot publish; any other role (incl. custom ones) is treated as publishing or above.
LOW_ROLES = frozenset({"subscriber", "contributor"})
# Global parameters WP-CLI accepts on every command (the forbidden ones never get this far).
_GLOBALS = frozenset(
    {"url", "quiet", "skip-plugins", "skip-themes", "skip-packages", "no-color", "color", "debug"}
)
_GLOBALS |= {"context", "allow-root", "format", "porcelain"}
_PROFILE_FIELDS = frozenset(
    {
        "display_name",
        "nickname",
        "first_name",
        "last_name",
        "description",
        "user_url",
        "user_nicename",
        "rich_editing",
        "syntax_highlighting",
        "comment_shortcuts",
        "admin_color",
        "use_ssl",
        "show_admin_bar_front",
        "locale",
        "user_registered",
        "skip-email",
        "send-email",
    }
)
# Fields WordPress accepts that change who can log in or what they may do: approval.
_APPROVAL_FIELDS = {
    "user_pass": "パスワード",
    "user_email": "メールアドレス",
    "role": "権限グループ",
    "spam": "スパム指定（ログイン不可）",
}
# WP-CLI resolves `pass` to `user_pass` in --field(s) (Formatter tries `<prefix>_<field>`).
SECRET_USER_FIELDS = frozenset({"user_pass", "pass", "user_activation_key", "activation_key"})
# A signup's activation key makes the account: shown by default, so the fields are named.
_SIGNUP_READS = {("user", "signup", "list"), ("user", "signup", "get")}
_SIGNUP_FIELDS_JA = "signup_id,user_login,user_email,registered,active"
_USER_META_READS = {("user", "meta", "get"), ("user", "meta", "pluck"), ("user", "meta", "list")}
_USER_META_WRITES = {
    ("user", "meta", "add"),
    ("user", "meta", "update"),
    ("user", "meta", "patch"),
    ("user", "meta", "delete"),
}


def _roles_named(cmd: ParsedCommand, path: tuple[str, ...]) -> list[str]:
    if path in {("user", "add-role"), ("user", "set-role")}:
        return list(cmd.args_after(path)[1:])
    return cmd.option_values("role")


# New rights for someone: a publishing role, any role change, a new email or password.


@argument_rule(
    match=("user create eve eve@example.com", "user create eve eve@example.com --porcelain"),
    not_match=(
        "user create taro taro@example.com --role=subscriber",
        "user create eve eve@example.com --role=",
    ),
    paths=("user create",),
)
def default_role(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    if cmd.has_flag("role"):
        return None
    return Verdict(
        D,
        "confirm.user.default_role",
        "権限グループを指定せずにユーザーを作成します（サイトの既定の権限グループになります）。承認が必要です",
        "user create",
    )


@argument_rule(
    match=(
        "user create eve eve@example.com --role=editor",
        "user create eve eve@example.com --role=author",
        "user create eve eve@example.com --role=shop_manager",
        "user add-role 2 editor",
    ),
    not_match=(
        "user create taro taro@example.com --role=subscriber",
        "user create hana hana@example.com --role=contributor --display_name=花子",
        "user add-role 2 contributor",
    ),
    paths=("user create", "user add-role"),
)
def publishing_role(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    roles = [folded(r) for r in _roles_named(cmd, path)]
    shown = next((r for r in roles if r not in LOW_ROLES), None)
    if shown is None:
        return None
    return Verdict(
        D,
        "confirm.user.publishing_role",
        f"投稿を公開できる以上の権限（{shown}）を付与します。承認が必要です",
        shown,
    )


@argument_rule(
    match=("user set-role 1 subscriber", "user set-role 2 editor"),
    not_match=("user add-role 2 contributor", "user remove-role 2 subscriber"),
    paths=("user set-role",),
)
def role_change(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    return Verdict(
        D,
        "confirm.user.role_change",
        "既存ユーザーの権限グループを変更します（昇格・降格・締め出しを含む）。承認が必要です",
        "user set-role",
    )


@argument_rule(
    match=(
        "user update 2 --role=contributor",
        "user update 1 --user_email=attacker@evil.example",
        "user update 1 --user_pass=hunter2",
        "user update 3 --spam=1",
    ),
    not_match=("user update 3 --display_name='山田 太郎'", "user update 3 --first_name=太郎"),
    paths=("user update",),
)
def account_changes(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    changed = [name for name in _APPROVAL_FIELDS if cmd.has_flag(name)]
    if not changed:
        return None
    return Verdict(
        D,
        "confirm.user.role_change" if "role" in changed else "confirm.user.credentials",
        f"既存ユーザーの{'・'.join(_APPROVAL_FIELDS[n] for n in changed)}を変更します。承認が必要です",
        ", ".join(f"--{n}" for n in changed),
    )


# A new login, whatever the path: `user create`, `user signup activate`, and `site create --email`.


@argument_rule(
    match=(
        "site create --slug=evil --title=Evil --email=attacker@evil.test",
        "site generate --count=2 --email=attacker@evil.test",
    ),
    not_match=("site create --slug=news --title=ニュース", "site generate --count=2"),
    paths=("site create", "site generate"),
)
def site_administrator_by_email(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    """WordPress creates a user with that address when none has it, makes it the new site's
    administrator and mails it a password (tried on the real network); an existing user of that address
    becomes its administrator."""
    if not cmd.has_flag("email"):
        return None
    email = next(iter(cmd.option_values("email")), "（空）")
    return Verdict(
        D,
        "confirm.account.login_created",
        f"新しいサイトを作成し、メールアドレス {email} のユーザーをそのサイトの管理者にします"
        "（そのアドレスのユーザーがいなければ、ログインできるアカウントを新しく作成してパスワードをメールで送ります）。承認が必要です",
        "--email",
    )


@argument_rule(
    match=("user signup activate bob", "user signup activate 3 4"),
    not_match=("user signup list --fields=signup_id,user_login", "user signup delete bob"),
    paths=("user signup activate",),
)
def signup_activation(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    return Verdict(
        D,
        "confirm.account.login_created",
        f"登録申請（{'、'.join(cmd.args_after(path))}）を承認し、ログインできるアカウントを作成します。承認が必要です",
        "user signup activate",
    )


@argument_rule(
    match=("user create taro taro@example.com --role=subscriber", "user create eve"),
    not_match=("user update 3 --display_name=太郎", "user add-role 2 subscriber"),
    paths=("user create",),
)
def new_login(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    login, email = ((*cmd.args_after(path), "?", "?"))[:2]
    return Verdict(
        D,
        "confirm.account.login_created",
        f"メールアドレス {email} でログインできる新しいアカウント（{login}）を作成します。承認が必要です",
        "user create",
    )


@argument_rule(
    match=("user reset-password admin --show-password", "user reset-password admin --porcelain"),
    not_match=("user reset-password admin --skip-email", "user reset-password admin"),
    paths=("user reset-password",),
)
def new_password_output(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    """A reset never prints the new password."""
    shown = next((o for o in cmd.options if o.name in {"show-password", "porcelain"}), None)
    if shown is None:
        return None
    return Verdict(
        B,
        "blocked.secret_output",
        "新しいパスワードを出力するオプション（--show-password / --porcelain）は使用できません",
        shown.token,
    )


@argument_rule(
    match=(
        "user update admin '--user_activation_key=1700000000:$P$Bxxxxxxxx'",
        "user update 2 --meta_input=x",
        "user update 2 --ID=1",
        "user create eve eve@example.com --role=subscriber --user_activation_key=x",
    ),
    not_match=(
        "user update 2 --first_name=太郎 --last_name=山田 --user_url=https://example.com",
        "user create eve eve@example.com --role=subscriber --porcelain",
    ),
    paths=("user update", "user create"),
)
def account_fields(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    """Only known profile fields reach wp_insert_user()."""
    accepted = _PROFILE_FIELDS | _APPROVAL_FIELDS.keys() | _GLOBALS
    odd = next((o for o in cmd.options if o.name not in accepted), None)
    if odd is None:
        return None
    return Verdict(
        B,
        "blocked.user_field",
        f"ユーザーの項目 --{odd.name} は変更できません（パスワードリセット用キーなど、ログインを乗っ取れる項目を含むため、"
        "表示名・氏名・URL などのプロフィール項目と、承認付きのパスワード・メールアドレス・権限だけを扱えます）",
        f"--{odd.name}",
    )


# Privilege and secret user data in any prefix: never written raw, never read.


@argument_rule(
    match=(
        "user meta update 2 wp_capabilities '{\"administrator\":true}' --format=json",
        "user meta set 2 wp_2_capabilities x",
        "user meta add 2 xyz_user_level 10",
        "user meta delete 2 WP_CAPABILITIES",
        "user meta patch insert 2 wp_capabilities administrator 1",
        "user meta update 1 session_tokens x",
        "user meta update 1 _two_factor_totp_key ABCDEF",
        "user meta delete 1 _two_factor_enabled_providers",
        "user meta get 1 _two_factor_totp_key",
        "user meta get 1 wp_capabilities",
        "user meta list 1 --keys=session_tokens",
        "user meta pluck 1 _application_passwords 0",
    ),
    not_match=(
        "user meta update 2 description 自己紹介",
        "user meta get 1 nickname",
        "user meta list 1",
        "user meta list 1 --keys=nickname,first_name",
    ),
    paths=(*_USER_META_WRITES, *_USER_META_READS),
)
def privileged_user_meta(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    args = cmd.args_after(path)
    if path == ("user", "meta", "patch"):
        keys = args[2:3]
    elif path == ("user", "meta", "list"):
        keys = tuple(k for v in cmd.option_values("keys") for k in v.split(","))
    else:
        keys = args[1:2]
    key = next((k for k in keys if is_privilege_key(k) or is_secret_key(k)), None)
    if key is None:
        return None
    writing = path in _USER_META_WRITES
    return Verdict(
        B,
        "blocked.privileged_user_meta",
        f"ユーザーの権限・認証情報（{key}）を{'直接書き換える' if writing else '読み出す'}ことはできません。"
        + (
            "権限の変更は user set-role / user add-role（承認が必要）で行ってください"
            if writing
            else "権限グループは user get <ID> --field=roles で確認できます"
        ),
        key,
    )


def _named_fields(cmd: ParsedCommand) -> set[str]:
    return {folded(part) for v in cmd.option_values("field", "fields") for part in v.split(",")}


@argument_rule(
    match=(
        "user signup list",
        "user signup get 3 --fields=user_login,activation_key",
        "user signup list --activation_key=abc --field=signup_id",
        "user signup list --field=0",
        "user signup get 3 --fields=signup_id,meta",
    ),
    not_match=("user signup list --fields=signup_id,user_login,user_email,registered,active",),
    paths=_SIGNUP_READS,
)
def signup_secrets(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    """Signups show their activation key unless the fields are named; a filter on a secret field is a
    guess checked against it."""
    names = _named_fields(cmd)
    filters = {
        folded(o.name) for o in cmd.options if o.name not in {"field", "fields", "format", "per_page", "url"}
    }
    # BuddyPress keeps a password hash in a signup's meta.
    secret = sorted(n for n in names | filters if n in SECRET_USER_FIELDS or is_secret_key(n) or n == "meta")
    if secret:
        return Verdict(
            B,
            "blocked.secret_field",
            f"パスワード等の認証情報（{secret[0]}）は出力・照合できません",
            secret[0],
        )
    # PHP reads "" and "0" as no field named: WP-CLI then prints the default fields.
    if not names or any(v.strip() in {"", "0"} for v in cmd.option_values("field", "fields")):
        return Verdict(
            B,
            "blocked.secret_field",
            "ユーザー登録申請の既定の表示には有効化キー（activation_key。アカウントを作れる認証情報）が含まれるため、"
            f"表示する項目を --fields で指定してください（例: --fields={_SIGNUP_FIELDS_JA}）",
            " ".join(cmd.positionals[:3]),
        )
    return None


@argument_rule(
    match=("user get 1 --field=user_activation_key", "user list --fields=ID,pass", "user get 1 user_pass"),
    not_match=("user get 1 --field=roles", "user list --fields=ID,user_login,user_email"),
    paths=("user",),
)
def secret_user_fields(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    """A password hash or activation key named as a field of any user command (`user get <id> <field>`
    too)."""
    if path in _USER_META_WRITES or path in _USER_META_READS or path in _SIGNUP_READS:
        return None  # (their own rules: privileged_user_meta, signup_secrets)
    names = _named_fields(cmd)
    if path == ("user", "get"):
        names |= {folded(a) for a in cmd.args_after(path)[1:]}
    secret = sorted(n for n in names if n in SECRET_USER_FIELDS or is_secret_key(n))
    if secret:
        return Verdict(
            B, "blocked.secret_field", f"パスワード等の認証情報（{secret[0]}）は出力できません", secret[0]
        )
    return None


@argument_rule(
    match=(
        "option update wp_user_roles '{}' --format=json",
        "option patch insert wp_user_roles subscriber capabilities manage_options 1",
        "option set wp_2_user_roles x",
        "option delete wp_user_roles",
    ),
    not_match=("option get wp_user_roles --format=json", "option update default_comment_status closed"),
    paths=OPTION_WRITES,
)
def role_definitions(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    """`*user_roles` holds every role's capabilities: writing it is `role create` / `cap add`."""
    key = written_option(cmd, path)
    if key is None or not folded(key).endswith("user_roles"):
        return None
    return Verdict(
        B,
        "blocked.role_definitions",
        f"権限グループの定義（{key}）は変更できません（権限グループや個別権限の追加・変更は行えません）",
        key,
    )


@argument_rule(
    match=(
        "site option update site_admins '[\"mallory\"]' --format=json",
        "site option patch insert site_admins 1 mallory",
        "site option add SITE_ADMINS x",
        "site option delete site_admins",
        "network meta update 1 site_admins '[\"mallory\"]' --format=json",
        "network meta patch insert 1 site_admins 1 mallory",
    ),
    not_match=(
        "site option get site_admins --format=json",
        "site option update blog_upload_space 200",
        "option update site_admins x",  # (a site's own option of that name grants nothing)
    ),
    paths=NETWORK_OPTION_WRITES,
)
def network_administrators(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    """`site_admins` is the network's super admins: writing it is `super-admin add` (a hard block)."""
    key = written_option(cmd, path)
    if key is None or folded(key) != "site_admins":
        return None
    return Verdict(
        B,
        "blocked.privilege_grant",
        f"ネットワークの特権管理者の一覧（{key}）は変更できません（super-admin の追加・削除と同じ操作です）",
        key,
    )


# The roles WordPress creates: their users would keep no rights at all (an administrator's: the site's).
WORDPRESS_ROLES = frozenset({"administrator", "editor", "author", "contributor", "subscriber"})


# Only what grants nothing: a new role without capabilities, the deletion of a role WordPress did not
# create, a capability taken from a role other than the administrators'.


@argument_rule(
    match=("role create Administrator Admin", "role create editor Editor"),
    not_match=("role create approver Approver", "role create editors Editors"),
    paths=("role create",),
)
def wordpress_role_name(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    args = cmd.args_after(path)
    if not args or folded(args[0]) not in WORDPRESS_ROLES:
        return None
    return Verdict(
        B,
        "blocked.role_definitions",
        f"WordPress標準の権限グループと紛らわしい名前（{args[0]}）の権限グループは作成できません",
        args[0],
    )


@argument_rule(
    match=(
        "role create shopadmin Shop --clone=administrator",
        "role create helper Helper --clone=subscriber",
    ),
    not_match=("role create approver Approver", "role create helper Helper"),
    paths=("role create",),
)
def cloned_role(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    """A clone carries every right of its source, and a later `user set-role` to it would read as harmless."""
    if not cmd.has_flag("clone"):
        return None
    return Verdict(
        B,
        "blocked.role_definitions",
        "既存の権限グループを複製して作る（--clone）と、その権限がすべて付与されるため実行できません。"
        "権限のない権限グループとして作成してください",
        "--clone",
    )


@argument_rule(
    match=("role delete editor", "role delete shop ADMINISTRATOR"),
    not_match=("role delete approver", "role delete shop approver"),
    paths=("role delete",),
)
def wordpress_role_deletion(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    core = [a for a in cmd.args_after(path) if folded(a) in WORDPRESS_ROLES]
    if not core:
        return None
    return Verdict(
        B,
        "blocked.role_definitions",
        f"WordPress標準の権限グループ（{core[0]}）は削除できません（そのユーザーが権限をすべて失います）",
        core[0],
    )


@argument_rule(
    match=("cap remove administrator manage_options", "cap remove Administrator edit_posts"),
    not_match=("cap remove author spectate", "cap remove editor manage_options"),
    paths=("cap remove",),
)
def administrator_capabilities(cmd: ParsedCommand, path: tuple[str, ...]) -> Verdict | None:
    args = cmd.args_after(path)
    if not args or folded(args[0]) != "administrator":
        return None
    return Verdict(
        B,
        "blocked.role_definitions",
        "管理者（administrator）から権限を外すと、サイトを管理できなくなる恐れがあるため実行できません",
        args[0],
    )
