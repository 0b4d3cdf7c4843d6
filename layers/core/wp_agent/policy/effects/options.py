"""The options (and theme settings) a write may change without approval, each with its value check.

Named by what is allowed: WordPress has hundreds of options and plugins add their own, and many
change what every page serves (`html_type`, `show_on_front`), who may register, where files go or
which code runs. Only the reading, writing, discussion and media settings people ordinarily ask for
are listed; every other option write, add, delete or patch waits for approval (or is refused by
the rules for secrets, roles, upload locations, cron and widgets).
"""

from __future__ import annotations

from wp_agent.policy.effects.values import (
    BOOLEAN,
    COLOUR,
    GMT_OFFSET,
    IMAGE_ID,
    OPEN_CLOSED,
    TIMEZONE,
    ValueCheck,
    int_range,
    one_of,
    plain_text,
)

_SIZE = int_range(0, 10_000)

OPTIONS: dict[str, ValueCheck] = {
    # Reading
    "posts_per_page": int_range(1, 500),
    "posts_per_rss": int_range(1, 500),
    "rss_use_excerpt": BOOLEAN,
    # General: date and time display
    "date_format": plain_text(64),
    "time_format": plain_text(64),
    "start_of_week": int_range(0, 6),
    "timezone_string": TIMEZONE,
    "gmt_offset": GMT_OFFSET,
    # Discussion
    "default_comment_status": OPEN_CLOSED,
    "default_ping_status": OPEN_CLOSED,
    "comment_moderation": BOOLEAN,
    "comment_previously_approved": BOOLEAN,
    "require_name_email": BOOLEAN,
    "comment_registration": BOOLEAN,
    "close_comments_for_old_posts": BOOLEAN,
    "close_comments_days_old": int_range(0, 36_500),
    "thread_comments": BOOLEAN,
    "thread_comments_depth": int_range(1, 10),
    "page_comments": BOOLEAN,
    "comments_per_page": int_range(1, 500),
    "default_comments_page": one_of("newest", "oldest"),
    "comment_order": one_of("asc", "desc"),
    "comment_max_links": int_range(0, 100),
    "comments_notify": BOOLEAN,
    "moderation_notify": BOOLEAN,
    "wp_notes_notify": BOOLEAN,  # WordPress 7.0: mail the author when someone leaves a note on a block
    "show_comments_cookies_opt_in": BOOLEAN,
    "show_avatars": BOOLEAN,
    "avatar_rating": one_of("G", "PG", "R", "X"),
    "avatar_default": one_of(
        "mystery", "blank", "gravatar_default", "identicon", "wavatar", "monsterid", "retro"
    ),
    # Media sizes
    "thumbnail_size_w": _SIZE,
    "thumbnail_size_h": _SIZE,
    "thumbnail_crop": BOOLEAN,
    "medium_size_w": _SIZE,
    "medium_size_h": _SIZE,
    "medium_large_size_w": _SIZE,
    "medium_large_size_h": _SIZE,
    "large_size_w": _SIZE,
    "large_size_h": _SIZE,
    "image_default_link_type": one_of("none", "file", "post", "custom"),
    "image_default_size": one_of("thumbnail", "medium", "large", "full"),
    "image_default_align": one_of("none", "left", "center", "right"),
    # Writing
    "use_smilies": BOOLEAN,
    "default_post_format": one_of(
        "0", "standard", "aside", "chat", "gallery", "link", "image", "quote", "status", "video", "audio"
    ),
}

# `theme mod set <mod> <value>`: theme settings every theme understands the same way.
THEME_MODS: dict[str, ValueCheck] = {
    "background_color": COLOUR,
    "header_textcolor": ValueCheck(
        "#RRGGBB 形式の色または blank", lambda v: v == "blank" or COLOUR.accepts(v)
    ),
    "custom_logo": IMAGE_ID,
}
