"""Known effects: for every write the command table allows, what it may change without approval.

A write runs without approval only when its declaration (effects/content.py, site_settings.py)
covers the command — its flags, arguments, keys and values; anything else waits for the requester's
approval or is refused. Declarations carry the commands that must fall inside and outside them,
checked when this package loads, and the rows and files they may change, checked on the real
sandbox by tests/integration/test_effect_conformance.py.
"""
