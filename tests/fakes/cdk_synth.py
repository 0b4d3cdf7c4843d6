"""The CDK app synthesised for the tests: the real core layer (a cheap copy) and an empty stand-in for
the dependency layer, so it runs offline in seconds. One context for every test (the infra tests'
assertions and the serverless stack's state machine alike), so one synthesis serves the whole run."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import App
from aws_cdk.assertions import Template

from infra import names
from infra.app import build_app
from infra.packaging import LayerDirs, build_core_layer
from infra.stack import WpAgentStack
from tests.fakes.run_once import once_per_run

ADMIN_PRINCIPALS = (
    "arn:aws:iam::111122223333:role/argo-note-admin",
    "arn:aws:iam::111122223333:user/operator",
)
BACKEND_PRINCIPALS = ("arn:aws:iam::123456789012:role/ArgoNoteBackend",)
TEST_CONTEXT: dict[str, Any] = {
    names.CONTEXT_BACKEND_PRINCIPALS: ",".join(BACKEND_PRINCIPALS),
    names.CONTEXT_ADMIN_PRINCIPALS: ",".join(ADMIN_PRINCIPALS),
}


@dataclass(frozen=True)
class Synthesized:
    """One synthesis of the stack."""

    app: App
    stack: WpAgentStack
    outdir: Path
    template: dict[str, Any]
    validation_report: dict[str, Any] | None
    """CDK's validation report when the synth failed policy validation (cdk-nag), else None."""

    @property
    def assertions(self) -> Template:
        return Template.from_json(self.template)


def stand_in_layers(root: Path) -> LayerDirs:
    dependencies = root / "dependencies-stand-in"
    (dependencies / "python").mkdir(parents=True)
    (dependencies / "python" / "README").write_text("stand-in for the dependency layer\n", encoding="utf-8")
    return LayerDirs(core=build_core_layer(root), dependencies=dependencies)


def synthesize(root: Path) -> Synthesized:
    """The app synthesised into `root` (its layers beside it); a cdk-nag finding is kept as the report
    (the templates are written before validation runs), not raised."""
    layers, outdir = stand_in_layers(root), root / "cdk.out"
    app, stack = build_app(layers=layers, context=TEST_CONTEXT, outdir=str(outdir))
    report: dict[str, Any] | None = None
    try:
        app.synth()
    except RuntimeError:
        report_file = outdir / "validation-report.json"
        if not report_file.is_file():
            raise
        report = json.loads(report_file.read_text(encoding="utf-8"))
    template = json.loads((outdir / f"{stack.stack_name}.template.json").read_text(encoding="utf-8"))
    return Synthesized(app=app, stack=stack, outdir=outdir, template=template, validation_report=report)


def template_once(factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The template, synthesised once per test run and shared by every worker."""
    found: dict[str, Any] = once_per_run(
        factory, "stack-template", lambda: synthesize(factory.mktemp("synth")).template
    )
    return found
