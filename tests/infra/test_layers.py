"""The real dependency layer: built with pip for Lambda (arm64, cp312) and inspected, and every
handler imported in a clean interpreter from nothing but the layers and its own folder.

These tests run pip. The first run downloads wheels from PyPI (network needed, ~10-60 s); later
runs reuse the content-keyed builds under build/layers (the same cache `make synth` uses).
"""

from __future__ import annotations

import json
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from infra import names
from infra import packaging as layers
from tests.infra.layer_inspection import (
    ELF_MACHINE_AARCH64,
    distributions_in,
    elf_machine,
    read_pins,
    unmet_requirements,
    wheel_tags,
)
from tests.infra.template_queries import function

pytestmark = [pytest.mark.slow, pytest.mark.layer_build]

NATIVE_DISTRIBUTIONS = ("cryptography", "bcrypt", "pynacl", "pydantic-core")
LAMBDA_UNZIPPED_LIMIT_BYTES = 250 * 1024 * 1024
PYTHON_312 = Path("/root/.pyenv/versions/3.12.1/bin/python")
THIRD_PARTY_MODULES = (
    "anthropic",
    "paramiko",
    "pydantic",
    "pydantic_settings",
    "aws_lambda_powertools",
    "aws_lambda_powertools.utilities.idempotency",
    "aws_xray_sdk.core",
    "nacl.bindings",
    "bcrypt",
    "cryptography.hazmat.primitives.asymmetric.ed25519",
    "boto3",
)


@pytest.fixture(scope="module")
def lambda_layer() -> Path:
    return layers.build_dependency_layer() / "python"


def _local_target(python_version: str) -> layers.TargetPlatform:
    return layers.TargetPlatform(
        platforms=(f"manylinux2014_{platform.machine()}",), python_version=python_version
    )


def test_layer_holds_aarch64_linux_wheels(lambda_layer: Path) -> None:
    for distribution in NATIVE_DISTRIBUTIONS:
        tags = wheel_tags(lambda_layer, distribution)
        assert tags, distribution
        for tag in tags:
            python_tag, abi_tag, platform_tag = tag.split("-")
            assert platform_tag.endswith("_aarch64"), tag
            assert platform_tag.startswith("manylinux"), tag
            assert python_tag == "cp312" or abi_tag == "abi3", tag


def test_every_native_library_is_aarch64(lambda_layer: Path) -> None:
    libraries = list(lambda_layer.rglob("*.so"))
    assert {p.name.split(".")[0] for p in libraries} >= {"_rust", "_bcrypt", "_sodium", "_pydantic_core"}
    assert {
        str(p.relative_to(lambda_layer)): elf_machine(p) for p in libraries if elf_machine(p) != 183
    } == {}
    assert ELF_MACHINE_AARCH64 == 183
    assert not [p for p in libraries if "x86_64" in p.name]


def test_layer_is_exactly_the_pinned_closure(lambda_layer: Path) -> None:
    installed = distributions_in(lambda_layer)
    pins = read_pins(layers.REQUIREMENTS_FILE)
    assert {name: d.version for name, d in installed.items()} == pins
    available = {**pins, **read_pins(layers.RUNTIME_PROVIDED_FILE)}
    assert unmet_requirements(installed.values(), available) == []
    assert not (lambda_layer / "bin").exists()
    assert not list(lambda_layer.rglob("__pycache__"))


def test_layers_and_code_fit_lambdas_size_limit(lambda_layer: Path) -> None:
    total = sum(p.stat().st_size for p in lambda_layer.rglob("*") if p.is_file())
    total += sum(p.stat().st_size for p in layers.build_core_layer().rglob("*") if p.is_file())
    total += max(
        sum(p.stat().st_size for p in (layers.FUNCTIONS_DIR / name.value).rglob("*") if p.is_file())
        for name in names.FunctionName
    )
    assert total < LAMBDA_UNZIPPED_LIMIT_BYTES


def _placeholder(key: str) -> str:
    """Stand-in values for environment variables CloudFormation fills at deploy time."""
    if key.endswith("_TABLE"):
        return f"wp-agent-{key.removeprefix('WP_AGENT_').removesuffix('_TABLE').lower()}"
    placeholders: dict[str, str] = {
        names.Env.EVENT_BUS: "wp-agent",
        names.Env.STATE_MACHINE_ARN: "arn:aws:states:us-east-1:123456789012:stateMachine:wp-agent-run",
        names.Env.SCHEDULER_ROLE_ARN: "arn:aws:iam::123456789012:role/wp-agent-scheduler",
        names.Env.ANTHROPIC_SECRET_ARN: (
            "arn:aws:secretsmanager:us-east-1:123456789012:secret:wp-agent/anthropic-api-key-AbCdEf"
        ),
    }
    return placeholders[key]


def _lambda_environment(
    template: dict[str, Any], name: names.FunctionName, task_root: Path
) -> dict[str, str]:
    variables = function(template, name)[1]["Properties"]["Environment"]["Variables"]
    environment = {
        key: value if isinstance(value, str) else _placeholder(key) for key, value in variables.items()
    }
    return {
        **environment,
        "AWS_REGION": "us-east-1",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_LAMBDA_FUNCTION_NAME": f"wp-agent-{name.value}",
        "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "256",
        "AWS_EXECUTION_ENV": "AWS_Lambda_python3.12",
        "LAMBDA_TASK_ROOT": str(task_root),
        "AWS_XRAY_CONTEXT_MISSING": "IGNORE_ERROR",
        "PATH": "/usr/bin:/bin",
    }


_IMPORT_CHECK = """
import importlib, json, pkgutil, sys
sys.path[:0] = json.loads(sys.argv[1])
leaked = [p for p in sys.path if "site-packages" in p or "dist-packages" in p]
assert not leaked, f"not a clean interpreter: {leaked}"
handler = importlib.import_module("handler")
assert callable(handler.lambda_handler), "handler.lambda_handler is not callable"
for module in json.loads(sys.argv[2]):
    importlib.import_module(module)
if json.loads(sys.argv[3]):
    import wp_agent
    for info in pkgutil.walk_packages(wp_agent.__path__, "wp_agent."):
        importlib.import_module(info.name)
print(json.dumps({"python": sys.version.split()[0], "path": sys.path}))
"""


def _import_handlers_with(
    python: Path, python_version: str, template: dict[str, Any], tmp_path: Path
) -> None:
    dependencies = layers.build_dependency_layer(
        target=_local_target(python_version),
        requirements=(layers.REQUIREMENTS_FILE, layers.RUNTIME_PROVIDED_FILE),
    )
    core = layers.build_core_layer()
    failures = {}
    # Each function's handler in a clean interpreter of its own; the first one also imports the
    # third-party modules and every module of the core package (the same layers serve every function).
    for n, name in enumerate(names.FunctionName):
        task_root = layers.FUNCTIONS_DIR / name.value
        search_path = [str(task_root), str(core / "python"), str(dependencies / "python")]
        completed = subprocess.run(
            [
                str(python),
                "-I",
                "-S",
                "-c",
                _IMPORT_CHECK,
                json.dumps(search_path),
                json.dumps(THIRD_PARTY_MODULES if n == 0 else []),
                json.dumps(n == 0),
            ],
            capture_output=True,
            text=True,
            check=False,
            cwd=tmp_path,
            env=_lambda_environment(template, name, task_root),
            timeout=120,
        )
        if completed.returncode != 0:
            failures[name.value] = completed.stderr.strip().splitlines()[-12:]
        else:
            report = json.loads(completed.stdout.strip().splitlines()[-1])
            assert report["python"].startswith(python_version)
    assert failures == {}


@pytest.mark.skipif(
    PYTHON_312.exists(), reason="the Lambda runtime's Python is here: the 3.12 test proves it"
)
def test_handlers_import_from_layers_alone(template: dict[str, Any], tmp_path: Path) -> None:
    """Built for this interpreter (the arm64/cp312 wheels cannot load here) with the same code: where
    the Lambda runtime's own Python is not installed (the rest of the suite runs the code on this one)."""
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    _import_handlers_with(Path(sys.executable), version, template, tmp_path)


@pytest.mark.skipif(not PYTHON_312.exists(), reason=f"{PYTHON_312} not installed")
def test_handlers_import_from_layers_alone_on_python_312(template: dict[str, Any], tmp_path: Path) -> None:
    """The Lambda runtime's Python version, on this machine's architecture."""
    _import_handlers_with(PYTHON_312, "3.12", template, tmp_path)
