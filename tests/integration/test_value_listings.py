"""Property on the real WordPress: every read whose rows pair a stored value with its name is one
the policy knows as such (read_oracles.NAME_COLUMNS), so a projection to the values alone is refused.

The masker tells a secret by the name beside its value; a listing projected to its values would show
the secret bare (`user meta list 1 --fields=meta_value` printed a 2FA seed). Which reads print such
rows is asked of the real WP-CLI here, not listed by hand: each read of the command table runs with
`--format=json` on the seeded site, and any row holding a name field beside a value field must come
from a path the policy knows, under that name. A new read of that kind fails here until it is known.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

from tests.fakes.wordpress import TestWordPress
from tests.integration.test_read_means_read import READ_PATHS, _formats, _synopses, sample_positionals
from wp_agent.policy import CommandPolicy, PolicyCategory
from wp_agent.policy.read_oracles import NAME_COLUMNS

POLICY = CommandPolicy()
PAIRS = {"option_name": "option_value", "meta_key": "meta_value", "key": "value"}


def _named_value_rows(stdout: str) -> set[str]:
    """The name fields of rows that pair a name with its value."""
    try:
        rows = json.loads(stdout)
    except ValueError:
        return set()
    rows = rows if isinstance(rows, list) else [rows]
    return {
        name
        for row in rows
        if isinstance(row, dict)
        for name, value in PAIRS.items()
        if {name, value} <= set(row)
    }


def test_every_listing_of_named_values_is_known_to_the_policy(seeded_wordpress: TestWordPress) -> None:
    site = seeded_wordpress
    synopses = _synopses(site)
    samples = sample_positionals(site.facts)
    forms = []
    for path in READ_PATHS:
        if "json" not in _formats(synopses[path][1]):
            continue
        for arguments in samples.get(path, [[]]):
            form = [*path, *arguments, "--format=json"]
            if POLICY.classify_argv(form).category is PolicyCategory.READ:
                forms.append((path, form))
    with ThreadPoolExecutor(max_workers=2) as workers:
        outputs = list(workers.map(lambda item: site.wp(*item[1]), forms))
    found = {
        path: names for (path, _), done in zip(forms, outputs, strict=True)
        if done.returncode == 0 and (names := _named_value_rows(done.stdout))
    }  # fmt: skip
    assert {("option", "list"), ("post", "meta", "list")} <= set(found)  # the property sees what it must
    unknown = {
        " ".join(path): sorted(names) for path, names in found.items() if NAME_COLUMNS.get(path) not in names
    }
    assert unknown == {}, "reads printing values beside their names that the policy does not know as such"
