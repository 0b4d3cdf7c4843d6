"""A backend's generator on the served OpenAPI document: openapi-typescript (npm, pinned with its
lockfile in tests/contract_client and installed by scripts/setup.sh) generates the TypeScript types,
with its default options, and `tsc --strict` type-checks a program that calls every operation through
openapi-fetch — including what must not compile (a missing X-Argo-User-Id, a status or error code
outside its enum, a bad decision) — and the README's calls with only what the README sends."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from wp_agent.http_api.app import openapi_document

CLIENT = Path(__file__).resolve().parents[1] / "contract_client"
PROGRAM = CLIENT / "calls_every_operation.ts"
README_CALLS = CLIENT / "readme_calls.ts"
BIN = CLIENT / "node_modules" / ".bin"

pytestmark = pytest.mark.slow


def _tool(name: str) -> str:
    tool = BIN / name
    if not tool.exists():
        pytest.fail(
            f"{tool} is missing: run scripts/setup.sh (it installs tests/contract_client with npm ci)"
        )
    return str(tool)


def test_the_program_names_every_operation_of_the_document() -> None:
    listed = set(re.findall(r"^  (\w+): true,$", PROGRAM.read_text(encoding="utf-8"), re.MULTILINE))
    operations = {op["operationId"] for ops in openapi_document()["paths"].values() for op in ops.values()}
    assert listed == operations


def test_a_generated_typescript_client_compiles(tmp_path: Path) -> None:
    document = tmp_path / "openapi.json"
    document.write_text(json.dumps(openapi_document(), ensure_ascii=False), encoding="utf-8")
    work = tmp_path / "client"
    (work / "generated").mkdir(parents=True)
    shutil.copy(PROGRAM, work)
    shutil.copy(README_CALLS, work)
    shutil.copy(CLIENT / "tsconfig.json", work)
    (work / "node_modules").symlink_to(CLIENT / "node_modules")
    generate = subprocess.run(
        [
            _tool("openapi-typescript"),
            str(document),  # the generator's default options, as a backend engineer runs it
            "-o",
            str(work / "generated" / "api.d.ts"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert generate.returncode == 0, generate.stdout + generate.stderr
    compiled = subprocess.run(
        [_tool("tsc"), "-p", str(work / "tsconfig.json")],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert compiled.returncode == 0, compiled.stdout + compiled.stderr
