"""`wp user list|get|create|update|delete|set-role|meta` (wp-cli/entity-command src/User_Command.php)."""

from __future__ import annotations

import fnmatch
import re
import secrets
import string
from typing import Any

from wp_agent.simulator.commands.batch import Outcome, run_each
from wp_agent.simulator.commands.input import flag, text
from wp_agent.simulator.commands.post_meta import MetaStore, register_meta_commands
from wp_agent.simulator.context import Context
from wp_agent.simulator.formatting import ArgValue, Formatter
from wp_agent.simulator.model import MetaRow, UserRow
from wp_agent.simulator.registry import command, describe
from wp_agent.simulator.synopsis import Param
from wp_agent.simulator.wordpress.slugs import sanitize_user
from wp_agent.simulator.wordpress.users import (
    ROLES,
    find_user,
    hash_password,
    is_email,
    is_member,
    user_roles,
)

describe("user", "Manages users, along with their roles, capabilities, and meta.")
describe("user meta", "Adds, updates, deletes, and lists user custom fields.")

FORMAT_DESCRIPTION = "Render output in a particular format."
LIST_FORMATS = Param(FORMAT_DESCRIPTION, ("table", "csv", "ids", "json", "count", "yaml"), "table")
ITEM_FORMATS = Param(FORMAT_DESCRIPTION, ("table", "csv", "json", "yaml"), "table")
DEFAULT_FIELDS = ("ID", "user_login", "display_name", "user_email", "user_registered", "roles")
DATA_FIELDS = (
    "user_login",
    "user_pass",
    "user_nicename",
    "user_email",
    "user_url",
    "user_registered",
    "user_activation_key",
)
META_FIELDS = ("first_name", "last_name", "nickname", "description", "rich_editing")
_PASSWORD_CHARS = string.ascii_letters + string.digits + "!@#$%^&*()"


def user_or_error(ctx: Context, reference: str) -> UserRow:
    user = find_user(ctx.network, reference)
    if user is None:
        ctx.error(f"Invalid user ID, email or login: '{reference}'")
    return user


def _users_or_warn(ctx: Context, references: list[str]) -> list[UserRow]:
    """`Fetchers\\Base::get_many`: a warning for each missing user."""
    found = []
    for reference in references:
        user = find_user(ctx.network, reference)
        if user is None:
            ctx.out.warning(f"Invalid user ID, email or login: '{reference}'")
        else:
            found.append(user)
    return found


def _validate_role(ctx: Context, role: str) -> None:
    if role and role not in ROLES:
        ctx.error(f"Role doesn't exist: {role}")


def _user_meta_rows(ctx: Context) -> list[MetaRow]:
    return ctx.network.usermeta


def _user_meta_next(ctx: Context) -> int:
    return ctx.network.new_id("next_usermeta_id")


def _user_meta_replace(ctx: Context, rows: list[MetaRow]) -> None:
    ctx.network.raw["usermeta"] = rows


USER_META = MetaStore(
    meta_type="user",
    rows=_user_meta_rows,
    next_id=_user_meta_next,
    replace_rows=_user_meta_replace,
    check_object=lambda ctx, reference: user_or_error(ctx, reference)["ID"],
)
register_meta_commands("user meta", USER_META)


def _set_user_meta(ctx: Context, user_id: int, key: str, value: str) -> None:
    for row in ctx.network.usermeta:
        if row["object_id"] == user_id and row["meta_key"] == key:
            row["meta_value"] = value
            return
    ctx.network.usermeta.append(
        MetaRow(meta_id=_user_meta_next(ctx), object_id=user_id, meta_key=key, meta_value=value)
    )


def _user_item(ctx: Context, user: UserRow) -> dict[str, Any]:
    item: dict[str, Any] = {"ID": user["ID"]}
    item.update({field: user[field] for field in DATA_FIELDS})  # type: ignore[literal-required]
    item["user_status"] = str(user["user_status"])
    item["display_name"] = user["display_name"]
    if ctx.multisite:
        item["spam"] = "0"
        item["deleted"] = "0"
    item["roles"] = ",".join(user_roles(user, ctx.blog.blog_id))
    item["url"] = f"{ctx.blog.home_url}/author/{user['user_nicename']}/"
    return item


@command(
    "user list",
    "[--role=<role>] [--<field>=<value>] [--network] [--field=<field>] [--fields=<fields>] [--format=<format>]",
    params={"format": LIST_FORMATS},
    description="Lists users.",
)
def list_users(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    network = flag(assoc, "network")
    if network and not ctx.multisite:
        ctx.error("This is not a multisite installation.")
    formatter = Formatter(ctx.out, assoc, DEFAULT_FIELDS, "user")
    blog_id = ctx.blog.blog_id
    users = [user for user in ctx.network.users if network or is_member(user, blog_id)]
    roles = [r for r in text(assoc, "role").split(",") if r] + [
        r for r in text(assoc, "role__in").split(",") if r
    ]
    if roles:
        users = [user for user in users if set(user_roles(user, blog_id)) & set(roles)]
    excluded_roles = {r for r in text(assoc, "role__not_in").split(",") if r}
    if excluded_roles:
        users = [user for user in users if not set(user_roles(user, blog_id)) & excluded_roles]
    include = {int(v) for v in text(assoc, "include").split(",") if v.strip().isdigit()}
    if include:
        users = [user for user in users if user["ID"] in include]
    exclude = {int(v) for v in text(assoc, "exclude").split(",") if v.strip().isdigit()}
    if exclude:
        users = [user for user in users if user["ID"] not in exclude]
    search = text(assoc, "search")
    if search:
        pattern = search if "*" in search else f"*{search}*"
        users = [
            user
            for user in users
            if any(
                fnmatch.fnmatch(str(user[key]).lower(), pattern.lower())
                for key in ("user_login", "user_email", "user_url", "user_nicename", "display_name")
            )
        ]
    orderby = text(assoc, "orderby", "login")
    sort_key = {
        "ID": "ID",
        "id": "ID",
        "email": "user_email",
        "registered": "user_registered",
        "display_name": "display_name",
        "nicename": "user_nicename",
    }.get(orderby, "user_login")
    users.sort(key=lambda user: user[sort_key], reverse=text(assoc, "order", "ASC").upper() == "DESC")  # type: ignore[literal-required]
    number = text(assoc, "number")
    if number.isdigit():
        users = users[: int(number)]
    if formatter.format == "ids":
        ctx.out.write(" ".join(str(user["ID"]) for user in users))
    elif formatter.format == "count":
        formatter.display_items([user["ID"] for user in users])
    else:
        formatter.display_items([_user_item(ctx, user) for user in users])


@command(
    "user get",
    "<user> [--field=<field>] [--fields=<fields>] [--format=<format>]",
    params={"format": ITEM_FORMATS},
    description="Gets details about a user.",
)
def get_user(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    user = user_or_error(ctx, args[0])
    data = _user_item(ctx, user)
    data["ID"] = str(user["ID"])
    data["roles"] = ", ".join(user_roles(user, ctx.blog.blog_id))
    del data["url"]
    if not assoc.get("fields"):
        assoc["fields"] = ",".join(data)
    Formatter(ctx.out, assoc, None, "user").display_item(data)


def _signup_error(ctx: Context, login: str, email: str) -> str | None:
    """`wpmu_validate_user_signup` (multisite only), first message wins."""
    if not re.fullmatch(r"[a-z0-9]+", login):
        return "Usernames can only contain lowercase letters (a-z) and numbers."
    if len(login) < 4:
        return "Username must be at least 4 characters."
    if login.isdigit():
        return "Sorry, usernames must have letters too!"
    if any(user["user_email"] == email for user in ctx.network.users):
        return "Sorry, that email address is already used!"
    return None


@command(
    "user create",
    "<user-login> <user-email> [--role=<role>] [--user_pass=<password>] [--user_registered=<yyyy-mm-dd-hh-ii-ss>] "
    "[--display_name=<name>] [--user_nicename=<nice_name>] [--user_url=<url>] [--nickname=<nickname>] "
    "[--first_name=<first_name>] [--last_name=<last_name>] [--description=<description>] "
    "[--rich_editing=<rich_editing>] [--send-email] [--porcelain]",
    mutates=True,
    description="Creates a new user.",
)
def create_user(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    login, email = args
    if any(user["user_login"] == login for user in ctx.network.users):
        ctx.error(f"The '{login}' username is already registered.")
    if not is_email(email):
        ctx.error(f"The '{email}' email address is invalid.")
    role = text(assoc, "role", ctx.blog.option_str("default_role"))
    _validate_role(ctx, role)
    if ctx.multisite:
        problem = _signup_error(ctx, login, email)
        if problem:
            ctx.error(problem)
    elif any(user["user_email"] == email for user in ctx.network.users):
        ctx.error("Sorry, that email address is already used!")
    clean_login = sanitize_user(login)
    if not clean_login:
        ctx.error("Cannot create a user with an empty login name.")
    if len(clean_login) > 60:
        ctx.error("Username may not be longer than 60 characters.")
    generated = "user_pass" not in assoc
    password = (
        text(assoc, "user_pass")
        if not generated
        else "".join(secrets.choice(_PASSWORD_CHARS) for _ in range(24))
    )
    user_id = ctx.network.new_id("next_user_id")
    user = UserRow(
        ID=user_id,
        user_login=clean_login,
        user_pass=hash_password(password),
        user_nicename=text(assoc, "user_nicename") or clean_login.lower().replace(" ", "-"),
        user_email=email,
        user_url=text(assoc, "user_url"),
        user_registered=text(assoc, "user_registered") or ctx.now_gmt(),
        user_activation_key="",
        user_status=0,
        display_name=text(assoc, "display_name") or clean_login,
        roles={str(ctx.blog.blog_id): [role] if role else []},
    )
    ctx.network.users.append(user)
    _set_user_meta(ctx, user_id, "nickname", text(assoc, "nickname") or clean_login)
    for key in ("first_name", "last_name", "description"):
        _set_user_meta(ctx, user_id, key, text(assoc, key))
    if flag(assoc, "porcelain"):
        ctx.out.line(str(user_id))
        return
    ctx.out.success(f"Created user {user_id}.")
    if generated:
        ctx.out.line(f"Password: {password}")


@command(
    "user update",
    "<user>... [--user_pass=<password>] [--user_nicename=<nice_name>] [--user_url=<url>] [--user_email=<email>] "
    "[--display_name=<display_name>] [--nickname=<nickname>] [--first_name=<first_name>] "
    "[--last_name=<last_name>] [--description=<description>] [--rich_editing=<rich_editing>] "
    "[--user_registered=<yyyy-mm-dd-hh-ii-ss>] [--role=<role>] --<field>=<value> [--skip-email]",
    mutates=True,
    description="Updates an existing user.",
)
def update_users(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    if "user_login" in assoc:
        ctx.out.warning("User logins can't be changed.")
        del assoc["user_login"]
    users = _users_or_warn(ctx, args)
    if not assoc:
        ctx.error("Need some fields to update.")

    def update_one(reference: str) -> Outcome:
        user = ctx.network.user(int(reference))
        if user is None:
            return ("error", "Invalid user ID.")
        email = text(assoc, "user_email")
        if email and any(
            other["user_email"] == email and other["ID"] != user["ID"] for other in ctx.network.users
        ):
            return ("error", "Sorry, that email address is already used!")
        if "user_pass" in assoc:
            user["user_pass"] = hash_password(text(assoc, "user_pass"))
        for field in ("user_nicename", "user_url", "user_email", "display_name", "user_registered"):
            if field in assoc:
                user[field] = text(assoc, field)
        for key in META_FIELDS:
            if key in assoc:
                _set_user_meta(ctx, user["ID"], key, text(assoc, key))
        role = text(assoc, "role")
        if role in ROLES:
            user["roles"][str(ctx.blog.blog_id)] = [role]
        return ("success", f"Updated user {user['ID']}.")

    run_each(ctx.out, [str(user["ID"]) for user in users], update_one)


@command(
    "user delete",
    "<user>... [--network] [--reassign=<user-id>] [--yes]",
    mutates=True,
    description="Deletes one or more users from the current site.",
)
def delete_users(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    network_wide = flag(assoc, "network") and ctx.multisite
    reassign = text(assoc, "reassign")
    if network_wide and reassign:
        ctx.error("Reassigning content to a different user is not supported on multisite.")
    if not reassign:
        ctx.confirm("--reassign parameter not passed. All associated posts will be deleted. Proceed?")
    users = _users_or_warn(ctx, args)

    def delete_one(reference: str) -> Outcome:
        user_id = int(reference)
        user = ctx.network.user(user_id)
        if user is None:
            return ("error", f"Failed deleting user {user_id}.")
        blogs = list(ctx.network.blogs()) if network_wide else [ctx.blog]
        for blog in blogs:
            for post in list(blog.posts):
                if post["post_author"] != str(user_id):
                    continue
                if reassign:
                    post["post_author"] = reassign
                elif post["post_type"] in ("post", "page", "attachment", "revision"):
                    blog.remove_post(post["ID"])
        if network_wide or not ctx.multisite:
            ctx.network.raw["users"] = [u for u in ctx.network.users if u["ID"] != user_id]
            ctx.network.raw["usermeta"] = [row for row in ctx.network.usermeta if row["object_id"] != user_id]
            if network_wide:
                return ("success", f"Deleted user {user_id}.")
        else:
            user["roles"].pop(str(ctx.blog.blog_id), None)
        return ("success", f"Removed user {user_id} from {ctx.blog.home_url}.")

    run_each(ctx.out, [str(user["ID"]) for user in users], delete_one)


@command("user set-role", "<user> [<role>]", mutates=True, description="Sets the user role.")
def set_role(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    user = user_or_error(ctx, args[0])
    role = args[1] if len(args) > 1 else ctx.blog.option_str("default_role")
    _validate_role(ctx, role)
    user["roles"][str(ctx.blog.blog_id)] = [role]
    ctx.out.success(f"Added {user['user_login']} ({user['ID']}) to {ctx.blog.site_url} as {role}.")
