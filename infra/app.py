"""CDK entry point: `python -m infra.app` (what cdk.json runs) synthesises to cdk.out/.

Builds the layers first (cached under build/, so only the first synth needs PyPI), then the stack,
with cdk-nag's AwsSolutions checks: an unacknowledged finding fails the synth.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from aws_cdk import App, Environment, Tags

from infra import names
from infra.nag import enable_aws_solutions_checks
from infra.packaging import REPO_ROOT, LayerDirs, build_layers
from infra.settings import SettingsError, StackSettings
from infra.stack import WpAgentStack


def cdk_json_context(path: Path = REPO_ROOT / "cdk.json") -> dict[str, Any]:
    """Feature flags and defaults from cdk.json; the CDK CLI passes them itself, `python -m` does not."""
    context = json.loads(path.read_text(encoding="utf-8")).get("context", {})
    return dict(context) if isinstance(context, dict) else {}


def build_app(
    *,
    layers: LayerDirs | None = None,
    context: Mapping[str, Any] | None = None,
    outdir: str | None = None,
) -> tuple[App, WpAgentStack]:
    """The app and its one stack, with cdk-nag enabled. Tests pass their own layers/context/outdir."""
    if outdir is None and "CDK_OUTDIR" not in os.environ:  # `python -m infra.app` without the CLI
        outdir = str(REPO_ROOT / "cdk.out")
    app = App(context={**cdk_json_context(), **(context or {})}, outdir=outdir)
    settings = StackSettings.from_context(
        {
            key: app.node.try_get_context(key)
            for key in (
                names.CONTEXT_BACKEND_PRINCIPALS,
                names.CONTEXT_ADMIN_PRINCIPALS,
                names.CONTEXT_APPROVAL_TIMEOUT_SECONDS,
                names.CONTEXT_ANTHROPIC_SECRET_ARN,
                names.CONTEXT_LOG_LEVEL,
            )
            if app.node.try_get_context(key) is not None
        }
    )
    account, region = os.environ.get("CDK_DEFAULT_ACCOUNT"), os.environ.get("CDK_DEFAULT_REGION")
    stack = WpAgentStack(
        app,
        names.STACK_ID,
        settings=settings,
        layers=layers or build_layers(),
        env=Environment(account=account, region=region) if account and region else None,
        description="wp-agent: Argo Note WP-CLI Agent (API, run workflow, storage, events, schedules)",
    )
    Tags.of(app).add("Project", names.SERVICE_NAME)  # cost allocation
    enable_aws_solutions_checks(app)
    return app, stack


def synth_error(error: SettingsError) -> str:
    """One Japanese line for a context value the synth refuses (what `make synth` prints, exit 1)."""
    if str(error).startswith(f"{names.CONTEXT_BACKEND_PRINCIPALS} is required"):
        return (
            "synth エラー [BACKEND_PRINCIPALS_REQUIRED]: API を呼び出せる Argo Note バックエンドの IAM ロールが指定されて"
            "いません。make synth BACKEND_PRINCIPALS=arn:aws:iam::123456789012:role/ArgoNoteBackend（cdk では "
            f"-c {names.CONTEXT_BACKEND_PRINCIPALS}=…）のように指定してください。"
        )
    key = str(error).split(" ", 1)[0].rstrip(":")
    return (
        f"synth エラー [INVALID_CONTEXT]: CDK コンテキスト {key} の値が正しくありません（{error}）。"
        "cdk.json か -c の値を直してください。"
    )


def main() -> None:
    try:
        app, _ = build_app()
    except SettingsError as exc:
        raise SystemExit(synth_error(exc)) from None
    app.synth()


if __name__ == "__main__":
    main()
