"""`make synth` with a context the stack refuses: one Japanese line with the fix, exit 1, no traceback."""

from __future__ import annotations

import os
import subprocess
import sys

from infra.app import synth_error
from infra.packaging import REPO_ROOT
from infra.settings import SettingsError, StackSettings


def test_synth_without_backend_principals_is_one_japanese_line() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "infra.app"],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=240, check=False,
        env={**os.environ, "CDK_CONTEXT_JSON": '{"backendPrincipals": ""}',
             "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20"},
    )  # fmt: skip
    assert done.returncode == 1
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("synth エラー [BACKEND_PRINCIPALS_REQUIRED]: ")
    assert "make synth BACKEND_PRINCIPALS=arn:aws:iam::123456789012:role/ArgoNoteBackend" in line
    assert "Traceback" not in done.stderr


def test_another_refused_context_value_names_its_key() -> None:
    try:
        StackSettings.from_context(
            {"backendPrincipals": "arn:aws:iam::123456789012:role/B", "logLevel": "LOUD"}
        )
    except SettingsError as exc:
        said = synth_error(exc)
    assert said.startswith(
        "synth エラー [INVALID_CONTEXT]: CDK コンテキスト logLevel の値が正しくありません（"
    )
