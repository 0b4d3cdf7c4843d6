"""`wp comment list|get|count|create|approve|unapprove|spam|trash|delete`
(wp-cli/entity-command src/Comment_Command.php).
"""

from __future__ import annotations

from typing import Any

from wp_agent.simulator.args import php_int
from wp_agent.simulator.commands.batch import Outcome, run_each
from wp_agent.simulator.commands.input import flag, text
from wp_agent.simulator.context import Context
from wp_agent.simulator.formatting import ArgValue, Formatter
from wp_agent.simulator.model import CommentRow
from wp_agent.simulator.registry import command, describe
from wp_agent.simulator.synopsis import Param
from wp_agent.simulator.wordpress.clock import gmt_from_local
from wp_agent.simulator.wordpress.posts import permalink

describe("comment", "Creates, updates, deletes, and moderates comments.")

FORMAT_DESCRIPTION = "Render output in a particular format."
DEFAULT_FIELDS = (
    "comment_ID",
    "comment_post_ID",
    "comment_date",
    "comment_approved",
    "comment_author",
    "comment_author_email",
)
STATUS_VALUES = {"approve": "1", "approved": "1", "hold": "0", "spam": "spam", "trash": "trash"}


def comment_or_error(ctx: Context, reference: str) -> CommentRow:
    comment = ctx.blog.comment(php_int(reference))
    if comment is None:
        ctx.error(f"Could not find the comment with ID {php_int(reference)}.")
    return comment


def _comment_output(ctx: Context, comment: CommentRow) -> dict[str, Any]:
    data: dict[str, Any] = dict(comment)
    post = ctx.blog.post(int(comment["comment_post_ID"]))
    base = permalink(ctx.blog, post) if post is not None else f"{ctx.blog.home_url}/"
    data["url"] = f"{base}#comment-{comment['comment_ID']}"
    return data


def _sort_value(comment: CommentRow, field: str) -> tuple[Any, int]:
    value: Any = dict(comment).get(field, "")
    if field in ("comment_ID", "comment_post_ID"):
        value = int(value)
    return (value, int(comment["comment_ID"]))


def _recount(ctx: Context, post_id: str) -> None:
    post = ctx.blog.post(php_int(post_id))
    if post is not None:
        approved = [
            c for c in ctx.blog.comments if c["comment_post_ID"] == post_id and c["comment_approved"] == "1"
        ]
        post["comment_count"] = str(len(approved))


@command(
    "comment list",
    "[--<field>=<value>] [--field=<field>] [--fields=<fields>] [--format=<format>]",
    params={"format": Param(FORMAT_DESCRIPTION, ("table", "ids", "csv", "json", "count", "yaml"), "table")},
    description="Gets a list of comments.",
)
def list_comments(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    formatter = Formatter(ctx.out, assoc, DEFAULT_FIELDS, "comment")
    comments = list(ctx.blog.comments)
    status = text(assoc, "status", "all")
    if status == "all":
        comments = [c for c in comments if c["comment_approved"] in ("0", "1")]
    elif status in STATUS_VALUES:
        comments = [c for c in comments if c["comment_approved"] == STATUS_VALUES[status]]
    post_id = text(assoc, "post_id") or text(assoc, "comment_post_ID")
    if post_id:
        comments = [c for c in comments if c["comment_post_ID"] == str(php_int(post_id))]
    wanted = {v.strip() for v in text(assoc, "comment__in").split(",") if v.strip()}
    if wanted:
        comments = [c for c in comments if c["comment_ID"] in wanted]
    if text(assoc, "type"):
        comments = [c for c in comments if c["comment_type"] == text(assoc, "type")]
    orderby = text(assoc, "orderby", "comment_date_gmt")
    descending = text(assoc, "order", "DESC").upper() != "ASC"
    key = orderby if orderby in DEFAULT_FIELDS or orderby == "comment_date_gmt" else "comment_date_gmt"
    comments.sort(key=lambda comment: _sort_value(comment, key), reverse=descending)
    number = text(assoc, "number")
    if number.isdigit():
        comments = comments[: int(number)]
    if formatter.format in ("ids", "count"):
        formatter.display_items([c["comment_ID"] for c in comments])
    else:
        formatter.display_items([_comment_output(ctx, c) for c in comments])


@command(
    "comment get",
    "<id> [--field=<field>] [--fields=<fields>] [--format=<format>]",
    params={"format": Param(FORMAT_DESCRIPTION, ("table", "csv", "json", "yaml"), "table")},
    description="Gets the data of a single comment.",
)
def get_comment(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    data = _comment_output(ctx, comment_or_error(ctx, args[0]))
    if not assoc.get("fields"):
        assoc["fields"] = ",".join(data)
    Formatter(ctx.out, assoc, None, "comment").display_item(data)


@command("comment count", "[<post-id>]", description="Counts comments, on whole blog or on a given post.")
def count_comments(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    comments = ctx.blog.comments
    if args:
        comments = [c for c in comments if c["comment_post_ID"] == str(php_int(args[0]))]

    def total(status: str) -> int:
        return sum(1 for c in comments if c["comment_approved"] == status)

    approved, moderated, spam = total("1"), total("0"), total("spam")
    counts = {
        "approved": approved,
        "spam": spam,
        "trash": total("trash"),
        "post-trashed": total("post-trashed"),
        "all": approved + moderated,
        "moderated": moderated,
        "total_comments": approved + moderated + spam,
    }
    for status, value in counts.items():
        ctx.out.line(f"{status}:".ljust(17) + str(value))


@command(
    "comment create",
    "[--<field>=<value>] [--porcelain]",
    mutates=True,
    description="Creates a new comment.",
)
def create_comment(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    post_id = text(assoc, "comment_post_ID")
    if post_id and ctx.blog.post(php_int(post_id)) is None:
        ctx.error(f"Can't find post {post_id}.")
    comment_id = ctx.blog.new_comment_id()
    local = text(assoc, "comment_date") or ctx.now_local()
    comment = CommentRow(
        comment_ID=str(comment_id),
        comment_post_ID=str(php_int(post_id)) if post_id else "0",
        comment_author=text(assoc, "comment_author"),
        comment_author_email=text(assoc, "comment_author_email"),
        comment_author_url=text(assoc, "comment_author_url"),
        comment_author_IP=text(assoc, "comment_author_IP"),
        comment_date=local,
        comment_date_gmt=text(assoc, "comment_date_gmt") or gmt_from_local(ctx.blog, local),
        comment_content=text(assoc, "comment_content"),
        comment_karma="0",
        comment_approved=text(assoc, "comment_approved", "1"),
        comment_agent=text(assoc, "comment_agent"),
        comment_type=text(assoc, "comment_type", "comment"),
        comment_parent=text(assoc, "comment_parent", "0"),
        user_id=text(assoc, "user_id", str(ctx.current_user_id)),
    )
    ctx.blog.comments.append(comment)
    _recount(ctx, comment["comment_post_ID"])
    if flag(assoc, "porcelain"):
        ctx.out.line(str(comment_id))
    else:
        ctx.out.success(f"Created comment {comment_id}.")


def _set_status(ctx: Context, references: list[str], status: str, verb: str) -> None:
    for reference in references:
        comment = comment_or_error(ctx, reference)
        if comment["comment_approved"] == status:
            ctx.error("Could not update comment status.")  # wp_set_comment_status's WP_Error
        comment["comment_approved"] = status
        _recount(ctx, comment["comment_post_ID"])
        ctx.out.success(f"{verb} comment {comment['comment_ID']}.")


@command("comment approve", "<id>...", mutates=True, description="Approves a comment.")
def approve(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    _set_status(ctx, args, "1", "Approved")


@command("comment unapprove", "<id>...", mutates=True, description="Unapproves a comment.")
def unapprove(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    _set_status(ctx, args, "0", "Unapproved")


def _move(ctx: Context, references: list[str], status: str, success: str, failure: str) -> None:
    for reference in references:
        comment = ctx.blog.comment(php_int(reference))
        if comment is None or comment["comment_approved"] == status:
            ctx.error(failure.format(f"comment {php_int(reference)}"))
        comment["comment_approved"] = status
        _recount(ctx, comment["comment_post_ID"])
        ctx.out.success(success.format(f"comment {comment['comment_ID']}"))


@command("comment spam", "<id>...", mutates=True, description="Marks a comment as spam.")
def spam(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    _move(ctx, args, "spam", "Marked {} as spam.", "Failed marking {} as spam.")


@command("comment trash", "<id>...", mutates=True, description="Trashes a comment.")
def trash(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    _move(ctx, args, "trash", "Trashed {}.", "Failed trashing {}.")


@command("comment delete", "<id>... [--force]", mutates=True, description="Deletes a comment.")
def delete(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    force = flag(assoc, "force")

    def delete_one(reference: str) -> Outcome:
        comment = ctx.blog.comment(php_int(reference))
        if comment is None:
            return ("error", f"Failed deleting comment {reference}.")
        if force or comment["comment_approved"] == "trash":
            ctx.blog.raw["comments"] = [c for c in ctx.blog.comments if c is not comment]
            verb = "Deleted"
        else:
            comment["comment_approved"] = "trash"
            verb = "Trashed"
        _recount(ctx, comment["comment_post_ID"])
        return ("success", f"{verb} comment {reference}.")

    run_each(ctx.out, args, delete_one)
