"""cdk-nag (AwsSolutions) and cfn-lint on the synthesized stack."""

from __future__ import annotations

import json
from typing import Any

import pytest
from aws_cdk import Validations
from aws_cdk.assertions import Annotations, Match
from cdk_nag import AwsSolutionsChecks
from cfnlint.api import ManualArgs, lint

from tests.infra.conftest import Synthesized

# The product runs in Tokyo; us-east-1 is cfn-lint's reference region.
LINT_REGIONS = ["ap-northeast-1", "us-east-1"]
# W3005: CDK adds an explicit DependsOn on a function's role policy next to the GetAtt on the
# role; redundant but harmless, and not ours to remove.
ACCEPTED_WARNINGS = {"W3005"}
# The live CDK app is synthesised once per worker that runs these: keep them on one.
pytestmark = pytest.mark.xdist_group("cdk-app")


def test_synth_passes_cdk_nag_aws_solutions(synthesized: Synthesized) -> None:
    report = synthesized.validation_report
    violations = [
        f"{violation['severity']} {violation['ruleName']} at "
        f"{[c.get('constructPath') for c in violation.get('violatingConstructs', [])]}"
        for plugin in (report or {}).get("pluginReports", [])
        for violation in plugin.get("violations", [])
    ]
    assert violations == []
    assert report is None


def test_aws_solutions_pack_reports_no_findings(synthesized: Synthesized) -> None:
    # Run the pack directly as well, so a plugin that silently stopped running cannot pass the test.
    result = AwsSolutionsChecks().validate_scope(synthesized.app)
    assert result.violations == []
    assert result.success


def test_no_unacknowledged_cdk_warnings(synthesized: Synthesized) -> None:
    annotations = Annotations.from_stack(synthesized.stack)
    assert annotations.find_error("*", Match.any_value()) == []
    assert annotations.find_warning("*", Match.any_value()) == []


def test_every_acknowledgement_has_a_reason(synthesized: Synthesized) -> None:
    acknowledged: dict[str, str] = {}
    for construct in synthesized.stack.node.find_all():
        for entry in construct.node.metadata:
            if entry.type == Validations.ACKNOWLEDGED_RULES_METADATA_KEY:
                acknowledged.update({f"{construct.node.path} {k}": str(v) for k, v in entry.data.items()})
    assert acknowledged, "expected the documented acknowledgements"
    for where, reason in acknowledged.items():
        assert len(reason) > 40, where


@pytest.mark.parametrize("region", LINT_REGIONS)
def test_cfn_lint_finds_no_errors(template: dict[str, Any], region: str) -> None:
    matches = lint(json.dumps(template), config=ManualArgs(regions=[region]))
    errors = [f"{m.rule.id} {m.message}" for m in matches if m.rule.severity == "error"]
    assert errors == []
    unexpected = [f"{m.rule.id} {m.message}" for m in matches if m.rule.id not in ACCEPTED_WARNINGS]
    assert unexpected == []
