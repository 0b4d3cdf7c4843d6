"""Taxonomies and terms: `wp_insert_term`, `wp_update_term`, `wp_delete_term`,
`wp_set_object_terms`, `get_terms`, `get_term_link`, with WordPress's error messages.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from wp_agent.simulator.model import Blog, TermRow
from wp_agent.simulator.wordpress.errors import WPError
from wp_agent.simulator.wordpress.slugs import sanitize_title, unique_slug


@dataclass(frozen=True)
class Taxonomy:
    name: str
    label: str
    description: str
    object_types: tuple[str, ...]
    hierarchical: bool
    public: bool
    show_tagcloud: bool
    link_base: str | None


TAXONOMIES: dict[str, Taxonomy] = {
    tax.name: tax
    for tax in (
        Taxonomy("category", "Categories", "", ("post",), True, True, True, "category"),
        Taxonomy("post_tag", "Tags", "", ("post",), False, True, True, "tag"),
        Taxonomy("nav_menu", "Navigation Menus", "", ("nav_menu_item",), False, False, False, None),
        Taxonomy("link_category", "Link Categories", "", ("link",), False, False, True, None),
        Taxonomy("post_format", "Formats", "", ("post",), False, True, False, "type"),
        Taxonomy(
            "wp_theme",
            "Themes",
            "",
            ("wp_template", "wp_template_part", "wp_global_styles"),
            False,
            False,
            False,
            None,
        ),
        Taxonomy(
            "wp_template_part_area",
            "Template Part Areas",
            "",
            ("wp_template_part",),
            False,
            False,
            False,
            None,
        ),
        Taxonomy("wp_pattern_category", "Pattern Categories", "", ("wp_block",), False, False, False, None),
    )
}


def term_count(blog: Blog, term: TermRow) -> int:
    """What `_update_post_term_count` would have stored: published objects only."""
    object_ids = blog.term_object_ids(term["term_taxonomy_id"])
    if term["taxonomy"] == "nav_menu":
        return len(object_ids)
    count = 0
    for object_id in object_ids:
        post = blog.post(object_id)
        if post is not None and post["post_status"] == "publish":
            count += 1
    return count


def with_count(blog: Blog, term: TermRow) -> dict[str, Any]:
    data: dict[str, Any] = dict(term)
    data["count"] = term_count(blog, term)
    return data


def term_link(blog: Blog, term: TermRow) -> str:
    taxonomy = TAXONOMIES.get(term["taxonomy"])
    home = blog.home_url
    structure = blog.option_str("permalink_structure")
    if taxonomy is not None and taxonomy.link_base and structure:
        base = blog.option_str(f"{taxonomy.link_base}_base") or taxonomy.link_base
        return f"{home}/{base.strip('/')}/{term['slug']}/"
    if term["taxonomy"] == "category":
        return f"{home}/?cat={term['term_id']}"
    if term["taxonomy"] == "post_tag":
        return f"{home}/?tag={term['slug']}"
    return f"{home}/?taxonomy={term['taxonomy']}&term={term['slug']}"


def term_by(blog: Blog, field: str, value: Any, taxonomy: str) -> TermRow | None:
    """`get_term_by`: field is 'id'/'term_id', 'slug', 'name' or 'term_taxonomy_id'."""
    text = str(value)
    for term in blog.terms_in(taxonomy):
        if field in ("id", "term_id", "ID") and text.strip().isdigit() and term["term_id"] == int(text):
            return term
        if field == "term_taxonomy_id" and text.isdigit() and term["term_taxonomy_id"] == int(text):
            return term
        if field == "slug" and term["slug"] == sanitize_title(text):
            return term
        if field == "name" and term["name"] == text:
            return term
    return None


def term_exists(blog: Blog, reference: str | int, taxonomy: str) -> TermRow | None:
    """`term_exists`: an int is an ID; a string matches the slug, then the name."""
    if isinstance(reference, int):
        return blog.term(reference, taxonomy)
    reference = reference.strip()
    if not reference:
        return None
    return term_by(blog, "slug", reference, taxonomy) or term_by(blog, "name", reference, taxonomy)


def insert_term(
    blog: Blog, name: str, taxonomy: str, *, slug: str = "", description: str = "", parent: int = 0
) -> TermRow | WPError:
    info = TAXONOMIES.get(taxonomy)
    if info is None:
        return WPError("invalid_taxonomy", "Invalid taxonomy.")
    name = name.strip()
    if not name:
        return WPError("empty_term_name", "A name is required for this term.")
    if parent and blog.term(parent, taxonomy) is None:
        return WPError("missing_parent", "Parent term does not exist.")
    slug_provided = bool(slug)
    slug = sanitize_title(slug or name)
    name_match = term_by(blog, "name", name, taxonomy)
    if name_match is not None:
        slug_match = term_by(blog, "slug", slug, taxonomy)
        if not slug_provided or name_match["slug"] == slug or slug_match is not None:
            if info.hierarchical:
                siblings = [term for term in blog.terms_in(taxonomy) if term["parent"] == parent]
                if (not slug_provided or name_match["slug"] == slug) and name in {
                    t["name"] for t in siblings
                }:
                    return WPError(
                        "term_exists", "A term with the name provided already exists with this parent."
                    )
                if slug_match is not None and slug in {t["slug"] for t in siblings}:
                    return WPError(
                        "term_exists", "A term with the name provided already exists with this parent."
                    )
            else:
                return WPError(
                    "term_exists", "A term with the name provided already exists in this taxonomy."
                )
    taken = {term["slug"] for term in blog.terms_in(taxonomy)}
    slug = unique_slug(slug, taken.__contains__)
    term = term_row(blog.new_term_id(), name, slug, taxonomy, description, parent)
    blog.terms.append(term)
    return term


def term_row(
    term_id: int, name: str, slug: str, taxonomy: str, description: str = "", parent: int = 0
) -> TermRow:
    """A new term as WordPress stores it (term and term_taxonomy ids alike, no uses yet)."""
    return TermRow(
        term_id=term_id,
        name=name,
        slug=slug,
        term_group=0,
        term_taxonomy_id=term_id,
        taxonomy=taxonomy,
        description=description,
        parent=parent,
        count=0,
        filter="raw",
    )


def update_term(blog: Blog, term: TermRow, changes: Mapping[str, Any]) -> TermRow | WPError:
    name = str(changes.get("name", term["name"])).strip()
    if not name:
        return WPError("empty_term_name", "A name is required for this term.")
    parent = int(changes.get("parent", term["parent"]) or 0)
    if parent and blog.term(parent, term["taxonomy"]) is None:
        return WPError("missing_parent", "Parent term does not exist.")
    slug = sanitize_title(str(changes["slug"])) if changes.get("slug") else term["slug"]
    duplicate = term_by(blog, "slug", slug, term["taxonomy"])
    if duplicate is not None and duplicate["term_id"] != term["term_id"]:
        return WPError(
            "duplicate_term_slug", f"The slug &#8220;{slug}&#8221; is already in use by another term."
        )
    term["name"] = name
    term["slug"] = slug
    term["parent"] = parent
    if "description" in changes:
        term["description"] = str(changes["description"])
    return term


def delete_term(blog: Blog, term_id: int, taxonomy: str) -> bool | WPError:
    """True when deleted; False (WordPress's 0) when missing or the default category."""
    if taxonomy not in TAXONOMIES:
        return WPError("invalid_taxonomy", "Invalid taxonomy.")
    term = blog.term(term_id, taxonomy)
    if term is None:
        return False
    if taxonomy == "category" and str(term_id) == blog.option_str("default_category"):
        return False
    objects = blog.term_object_ids(term["term_taxonomy_id"])
    blog.raw["term_relationships"] = [
        pair for pair in blog.relationships if pair[1] != term["term_taxonomy_id"]
    ]
    blog.raw["terms"] = [row for row in blog.terms if row["term_id"] != term_id]
    for child in blog.terms_in(taxonomy):
        if child["parent"] == term_id:
            child["parent"] = term["parent"]
    if taxonomy == "category":
        default = int(blog.option_str("default_category") or 1)
        for object_id in objects:
            if not object_categories(blog, object_id):
                blog.relationships.append([object_id, default])
    return True


def object_terms(blog: Blog, object_id: int, taxonomies: Iterable[str]) -> list[TermRow]:
    wanted = set(taxonomies)
    ids = set(blog.object_term_ids(object_id))
    found = [term for term in blog.terms if term["term_taxonomy_id"] in ids and term["taxonomy"] in wanted]
    return sorted(found, key=lambda term: term["name"].casefold())


def object_categories(blog: Blog, object_id: int) -> list[TermRow]:
    return object_terms(blog, object_id, ["category"])


def set_object_terms(
    blog: Blog, object_id: int, references: Sequence[str | int], taxonomy: str, *, append: bool
) -> list[int] | WPError:
    """`wp_set_object_terms`: unknown names/slugs are created (ints are skipped)."""
    if taxonomy not in TAXONOMIES:
        return WPError("invalid_taxonomy", "Invalid taxonomy.")
    ids: list[int] = []
    for reference in references:
        if isinstance(reference, str) and not reference.strip():
            continue
        term = term_exists(blog, reference, taxonomy)
        if term is None:
            if isinstance(reference, int):
                continue
            created = insert_term(blog, reference, taxonomy)
            if isinstance(created, WPError):
                return created
            term = created
        ids.append(term["term_taxonomy_id"])
    if not append:
        taxonomy_ids = {term["term_taxonomy_id"] for term in blog.terms_in(taxonomy)}
        blog.raw["term_relationships"] = [
            pair for pair in blog.relationships if not (pair[0] == object_id and pair[1] in taxonomy_ids)
        ]
    existing = set(blog.object_term_ids(object_id))
    for term_taxonomy_id in ids:
        if term_taxonomy_id not in existing:
            blog.relationships.append([object_id, term_taxonomy_id])
            existing.add(term_taxonomy_id)
    return ids


def remove_object_terms(
    blog: Blog, object_id: int, references: Sequence[str | int], taxonomy: str
) -> bool | WPError:
    if taxonomy not in TAXONOMIES:
        return WPError("invalid_taxonomy", "Invalid taxonomy.")
    doomed = set()
    for reference in references:
        term = term_exists(blog, reference, taxonomy)
        if term is not None:
            doomed.add(term["term_taxonomy_id"])
    blog.raw["term_relationships"] = [
        pair for pair in blog.relationships if not (pair[0] == object_id and pair[1] in doomed)
    ]
    return True


def get_terms(blog: Blog, taxonomies: Sequence[str], args: Mapping[str, Any]) -> list[TermRow]:
    """A subset of `get_terms()` arguments (hide_empty defaults to false, as `wp term list` sets it)."""
    terms = [term for term in blog.terms if term["taxonomy"] in taxonomies]

    def ints(key: str) -> set[int]:
        raw = args.get(key)
        values = raw if isinstance(raw, list) else str(raw or "").split(",")
        return {int(value) for value in values if str(value).strip().isdigit()}

    if args.get("include"):
        include = ints("include")
        terms = [term for term in terms if term["term_id"] in include]
    if args.get("exclude"):
        exclude = ints("exclude")
        terms = [term for term in terms if term["term_id"] not in exclude]
    if "parent" in args and args["parent"] is not True:
        terms = [term for term in terms if term["parent"] == int(str(args["parent"]) or 0)]
    if args.get("slug"):
        slugs = {sanitize_title(s) for s in str(args["slug"]).split(",")}
        terms = [term for term in terms if term["slug"] in slugs]
    if args.get("name"):
        names = set(str(args["name"]).split(","))
        terms = [term for term in terms if term["name"] in names]
    search = args.get("search")
    if isinstance(search, str) and search:
        needle = search.casefold()
        terms = [term for term in terms if needle in term["name"].casefold() or needle in term["slug"]]
    hide_empty = args.get("hide_empty")
    if hide_empty not in (False, None, "", "0", "false"):
        terms = [term for term in terms if term_count(blog, term) > 0]
    orderby = str(args.get("orderby") or "name")
    keys = {
        "name": lambda term: term["name"].casefold(),
        "slug": lambda term: term["slug"],
        "term_id": lambda term: term["term_id"],
        "id": lambda term: term["term_id"],
        "count": lambda term: term_count(blog, term),
        "parent": lambda term: term["parent"],
    }
    if orderby == "include" and args.get("include"):
        order = [int(v) for v in str(args["include"]).split(",") if v.strip().isdigit()]
        terms.sort(key=lambda term: order.index(term["term_id"]) if term["term_id"] in order else len(order))
    elif orderby in keys:
        terms.sort(key=keys[orderby])
    if str(args.get("order") or "ASC").upper() == "DESC":
        terms.reverse()
    number = str(args.get("number") or "")
    if number.isdigit() and int(number) > 0:
        offset = int(str(args.get("offset") or 0)) if str(args.get("offset") or "0").isdigit() else 0
        terms = terms[offset : offset + int(number)]
    return terms
