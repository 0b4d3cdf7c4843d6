"""The effect-conformance harness (issue 24): commands generated from the command table's grammar, run
on the real sandbox when the policy lets them run without approval, and their changes compared with
what their declared effects allow. Used by tests/integration/test_effect_conformance.py (a bounded
sample) and scripts/effect_conformance.py (the long run)."""
