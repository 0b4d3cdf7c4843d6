"""Secrets in structured WP-CLI output, masked by key at any depth and by value shape.

Covers what WP-CLI prints: JSON (`--format=json`, nested option values), PHP-serialized values
(option and meta values as stored), tab-separated tables (`--format=table` without a terminal),
CSV, YAML, and PHP var_export() (`option get` of an array). A value is masked when its key is a
secret name (`secret`, `client_secret`, `api_key`, `password`, `pass`, `token`, `license`, …), when
it is the value of a name/value row whose name is secret (`option_name` + `option_value`,
`meta_key` + `meta_value`, `key` + `value`, `Field` + `Value`, in any order: paired by row, list
item or array), or when it has a secret's shape (`sk_live_…`, PEM).
"""

from __future__ import annotations

import csv

from wp_agent.masking.lines import mask_lines
from wp_agent.masking.secret_values import mask_pem_blocks
from wp_agent.masking.tables import is_header, mask_csv, mask_table
from wp_agent.masking.values import SERIALIZED_START, mask_serialized, mask_value, parses
from wp_agent.masking.var_export import VAR_EXPORT_START, mask_var_export

__all__ = ["mask_document", "mask_value"]


def mask_document(text: str) -> tuple[str, bool]:
    """A whole WP-CLI output (JSON, serialized PHP, TSV/CSV tables, YAML, var_export, plain text)
    masked by key; the flag says whether it was one structured document (then no key/value pairs
    are left for text patterns to find)."""
    if not text:
        return text, False
    text = mask_pem_blocks(text)
    stripped = text.strip()
    whole: str | None = None
    if stripped[:1] in "[{" and parses(stripped):
        whole = mask_value(stripped)
    elif SERIALIZED_START.match(stripped):
        whole = mask_serialized(stripped, 0)
    if whole is not None:
        return text.replace(stripped, whole, 1), True
    lines = text.split("\n")
    if VAR_EXPORT_START.match(stripped):
        return "\n".join(mask_var_export(lines)), False
    first = next((line for line in lines if line.strip()), "")
    if "\t" in first and is_header(first.split("\t")):
        return mask_table(lines, "\t"), False
    if "," in first and is_header(next(csv.reader([first]))):
        masked = mask_csv(text)
        if masked is not None:
            return masked, False
    return "\n".join(mask_lines(lines)), False
