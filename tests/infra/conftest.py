"""Synthesise the stack once per test session; every infra test reads that one template.

The synth uses the real core layer (a cheap copy) and an empty stand-in for the dependency layer,
so template, cdk-nag and cfn-lint tests run offline in seconds. The dependency layer itself is
built and inspected by the `layer_build` tests in test_layers.py.
"""

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
from infra.packaging import BUILD_DIR_ENV, LayerDirs, build_core_layer
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


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "layer_build: builds a Lambda dependency layer with pip (first run downloads wheels from PyPI)",
    )


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


@pytest.fixture(scope="session")
def stand_in_layers(tmp_path_factory: pytest.TempPathFactory) -> LayerDirs:
    root = tmp_path_factory.mktemp("layers")
    dependencies = root / "dependencies-stand-in"
    (dependencies / "python").mkdir(parents=True)
    (dependencies / "python" / "README").write_text("stand-in for the dependency layer\n", encoding="utf-8")
    return LayerDirs(core=build_core_layer(root), dependencies=dependencies)


@pytest.fixture(scope="session")
def synthesized(tmp_path_factory: pytest.TempPathFactory, stand_in_layers: LayerDirs) -> Synthesized:
    outdir = tmp_path_factory.mktemp("cdk.out")
    app, stack = build_app(layers=stand_in_layers, context=TEST_CONTEXT, outdir=str(outdir))
    report: dict[str, Any] | None = None
    try:
        app.synth()
    except RuntimeError:  # cdk-nag findings: the templates are written before validation runs
        report_file = outdir / "validation-report.json"
        if not report_file.is_file():
            raise
        report = json.loads(report_file.read_text(encoding="utf-8"))
    template = json.loads((outdir / f"{stack.stack_name}.template.json").read_text(encoding="utf-8"))
    return Synthesized(app=app, stack=stack, outdir=outdir, template=template, validation_report=report)


@pytest.fixture(scope="session")
def template(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The synthesised template: one synthesis for the whole run, whichever worker asks first (the
    tests that need the live app, test_policy_checks.py, keep to one worker: xdist_group)."""

    def synthesize() -> dict[str, Any]:
        live: Synthesized = request.getfixturevalue("synthesized")
        return live.template

    found: dict[str, Any] = once_per_run(tmp_path_factory, "infra-template", synthesize)
    return found


@pytest.fixture(scope="session")
def assertions(template: dict[str, Any]) -> Template:
    return Template.from_json(template)


@pytest.fixture
def isolated_build_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private layer build root, via the same environment variable operators use."""
    monkeypatch.setenv(BUILD_DIR_ENV, str(tmp_path / "build"))
    return tmp_path / "build"
