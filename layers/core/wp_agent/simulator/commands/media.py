"""`wp media import` (wp-cli/media-command src/Media_Command.php).

Nothing is downloaded: a URL is recorded as an attachment named after its file, the way a
successful sideload would look. Local paths must exist, as in WP-CLI.
"""

from __future__ import annotations

import os
from urllib.parse import unquote, urlsplit

from wp_agent.simulator.args import php_int
from wp_agent.simulator.commands.batch import report_batch_operation_results
from wp_agent.simulator.commands.input import flag, text
from wp_agent.simulator.context import Context
from wp_agent.simulator.formatting import ArgValue
from wp_agent.simulator.registry import command, describe
from wp_agent.simulator.wordpress.errors import WPError
from wp_agent.simulator.wordpress.posts import insert_post

describe("media", "Imports files as attachments, regenerates thumbnails, or lists registered image sizes.")

MIME_TYPES = {
    "jpg": "image/jpeg",
    "jpeg": "image/jpeg",
    "jpe": "image/jpeg",
    "png": "image/png",
    "gif": "image/gif",
    "webp": "image/webp",
    "avif": "image/avif",
    "ico": "image/x-icon",
    "heic": "image/heic",
    "pdf": "application/pdf",
    "doc": "application/msword",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "xls": "application/vnd.ms-excel",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "ppt": "application/vnd.ms-powerpoint",
    "pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    "zip": "application/zip",
    "txt": "text/plain",
    "csv": "text/csv",
    "mp3": "audio/mpeg",
    "m4a": "audio/mpeg",
    "wav": "audio/wav",
    "mp4": "video/mp4",
    "mov": "video/quicktime",
    "webm": "video/webm",
}


def _file_name(source: str) -> str:
    if "://" in source:
        return os.path.basename(unquote(urlsplit(source).path)) or "file"
    return os.path.basename(source)


def _unique_file(ctx: Context, folder: str, name: str) -> str:
    """`wp_unique_filename`: name.jpg, then name-1.jpg, name-2.jpg, ..."""
    used = {str(row["meta_value"]) for row in ctx.blog.postmeta if row["meta_key"] == "_wp_attached_file"}
    stem, dot, extension = name.rpartition(".")
    if not dot:
        stem, extension = name, ""
    candidate = name
    number = 1
    while f"{folder}{candidate}" in used:
        candidate = f"{stem}-{number}{dot}{extension}"
        number += 1
    return candidate


@command(
    "media import",
    "<file>... [--post_id=<post_id>] [--post_name=<post_name>] [--file_name=<name>] [--title=<title>] "
    "[--caption=<caption>] [--alt=<alt_text>] [--desc=<description>] [--skip-copy] [--destination-dir=<destination-dir>] "
    "[--preserve-filetime] [--featured_image] [--porcelain[=<field>]]",
    mutates=True,
    description="Creates attachments from local files or URLs.",
)
def import_media(ctx: Context, args: list[str], assoc: dict[str, ArgValue]) -> None:
    porcelain = assoc.get("porcelain")
    if isinstance(porcelain, str) and porcelain != "url":
        ctx.error(f"Invalid value for <porcelain>: {porcelain}. Expected flag or 'url'.")
    parent_id = 0
    if "post_id" in assoc:
        parent_id = php_int(assoc["post_id"])
        if ctx.blog.post(parent_id) is None:
            ctx.out.warning("Invalid --post_id")
            parent_id = 0
    featured = flag(assoc, "featured_image")
    successes = errors = 0
    for source in args:
        if "://" not in source and not os.path.isfile(source):
            ctx.out.warning(f"Unable to import file '{source}'. Reason: File doesn't exist.")
            errors += 1
            continue
        name = _file_name(source)
        if text(assoc, "file_name"):
            name = text(assoc, "file_name") + ("." + name.rpartition(".")[2] if "." in name else "")
        extension = name.rpartition(".")[2].lower() if "." in name else ""
        mime = MIME_TYPES.get(extension)
        if mime is None:
            ctx.out.warning(
                f"Unable to import file '{source}'. Reason: Sorry, you are not allowed to upload this file type."
            )
            errors += 1
            continue
        local_now = ctx.now_local()
        folder = (
            f"{local_now[:4]}/{local_now[5:7]}/"
            if ctx.blog.option_str("uploads_use_yearmonth_folders") == "1"
            else ""
        )
        name = _unique_file(ctx, folder, name)
        title = text(assoc, "title") or name.rpartition(".")[0] or name
        fields = {
            "post_title": title,
            "post_content": text(assoc, "desc"),
            "post_excerpt": text(assoc, "caption"),
            "post_status": "inherit",
            "post_type": "attachment",
            "post_mime_type": mime,
            "post_parent": parent_id,
            "post_name": text(assoc, "post_name") or title,
            "guid": f"{ctx.blog.home_url}/wp-content/uploads/{folder}{name}",
        }
        attachment = insert_post(ctx.blog, ctx.clock, fields, ctx.current_user_id)
        if isinstance(attachment, WPError):
            ctx.out.warning(f"Unable to import file '{source}'. Reason: {attachment.message}")
            errors += 1
            continue
        attachment_id = attachment["ID"]
        ctx.blog.add_meta(attachment_id, "_wp_attached_file", f"{folder}{name}")
        if text(assoc, "alt"):
            ctx.blog.update_meta(attachment_id, "_wp_attachment_image_alt", text(assoc, "alt"))
        if parent_id and featured:
            ctx.blog.update_meta(parent_id, "_thumbnail_id", str(attachment_id))
        suffix = ""
        if parent_id:
            suffix = f" and attached to post {parent_id}" + (" as featured image" if featured else "")
        if porcelain == "url":
            ctx.out.line(attachment["guid"])
        elif porcelain:
            ctx.out.line(str(attachment_id))
        else:
            ctx.out.log(f"Imported file '{source}' as attachment ID {attachment_id}{suffix}.")
        successes += 1
    if porcelain:
        if errors:
            ctx.out.halt(1)
        return
    report_batch_operation_results(ctx.out, "item", "import", len(args), successes, errors)
