"""Layer packaging without Docker: pins, closure, core-layer contents, caching (pip faked here)."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

from infra import packaging as layers
from tests.infra.layer_inspection import Distribution, read_pins, unmet_requirements

CONSTRAINTS = layers.REPO_ROOT / "constraints.txt"
RUNTIME_PROVIDED = {"boto3", "botocore", "s3transfer", "urllib3", "python-dateutil", "six"}


def test_requirements_are_pinned_to_the_constraints() -> None:
    constraints = read_pins(CONSTRAINTS)
    for name, version in read_pins(layers.REQUIREMENTS_FILE).items():
        assert constraints.get(name) == version, name
    for name, version in read_pins(layers.RUNTIME_PROVIDED_FILE).items():
        assert constraints.get(name) == version, name


def test_runtime_provided_sdk_is_not_in_the_layer() -> None:
    layer = set(read_pins(layers.REQUIREMENTS_FILE))
    assert layer.isdisjoint(RUNTIME_PROVIDED)
    assert set(read_pins(layers.RUNTIME_PROVIDED_FILE)) == RUNTIME_PROVIDED
    assert {"pydantic", "pydantic-settings", "anthropic", "paramiko", "aws-lambda-powertools"} <= layer
    assert "aws-xray-sdk" in layer  # aws-lambda-powertools[tracer]


def test_requirements_are_a_complete_closure() -> None:
    """Every dependency of every pinned package (for Lambda's platform) is pinned or runtime-provided.

    Read from this virtualenv's metadata, which holds the same versions (constraints.txt); the
    layer_build tests repeat the check on the built layer.
    """
    pins = read_pins(layers.REQUIREMENTS_FILE)
    available = {**pins, **read_pins(layers.RUNTIME_PROVIDED_FILE)}
    installed = []
    for name, version in pins.items():
        metadata = importlib.metadata.distribution(name)
        assert Version(metadata.version) == version, f"venv has {name} {metadata.version}"
        installed.append(Distribution(name, version, tuple(Requirement(r) for r in metadata.requires or [])))
    assert unmet_requirements(installed, available) == []


def test_core_layer_holds_the_package_without_caches(tmp_path: Path) -> None:
    root = layers.build_core_layer(tmp_path)
    package = root / "python" / "wp_agent"
    copied = {p.relative_to(package) for p in package.rglob("*") if p.is_file()}
    source = {
        p.relative_to(layers.CORE_PACKAGE_DIR)
        for p in layers.CORE_PACKAGE_DIR.rglob("*")
        if p.is_file()
        and "__pycache__" not in p.parts
        and p.suffix != ".pyc"
        and p.relative_to(layers.CORE_PACKAGE_DIR).parts[0] not in layers.LOCAL_ONLY_PACKAGES
    }
    assert copied == source
    assert Path("__init__.py") in copied
    assert Path("py.typed") in copied
    assert not any("__pycache__" in p.parts for p in copied)
    assert not any(p.parts[0] == "simulator" for p in copied)  # no home-made WordPress in Lambda
    assert not any(p.parts[0] == "mcp_server" for p in copied)  # the MCP server runs locally only


@pytest.mark.slow
def test_the_wheel_carries_no_home_made_wordpress(tmp_path: Path) -> None:
    """The WP-CLI simulator is gone: no package, no `wp-sim` script; the sandbox runs real WP-CLI and
    ships only its provisioning files (the seed, provision.php, the WP-CLI checksum pin)."""
    pyproject = tomllib.loads((layers.REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert pyproject["project"]["scripts"] == {"wp-agent": "wp_agent.cli.main:main"}
    assert not (layers.CORE_PACKAGE_DIR / "simulator").exists()
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet",
         "--wheel-dir", str(tmp_path), str(layers.REPO_ROOT)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
    (wheel,) = tmp_path.glob("wp_agent-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert not [n for n in names if "simulator" in n or "wp-sim" in n or "wp_sim" in n]
    assert "wp_agent/sandbox/provision.php" in names
    assert "wp_agent/sandbox/wp-cli.sha512" in names
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    assert "wp-sim" not in zipfile.ZipFile(wheel).read(entry_points).decode()


def test_core_layer_is_content_keyed_and_reused(tmp_path: Path) -> None:
    source = tmp_path / "src" / "wp_agent"
    source.mkdir(parents=True)
    (source / "__init__.py").write_text("VERSION = 1\n", encoding="utf-8")
    first = layers.build_core_layer(tmp_path / "build", source=source)
    assert layers.build_core_layer(tmp_path / "build", source=source) == first
    (source / "__init__.py").write_text("VERSION = 2\n", encoding="utf-8")
    second = layers.build_core_layer(tmp_path / "build", source=source)
    assert second != first
    assert not first.exists()  # the stale build is pruned
    assert (second / "python" / "wp_agent" / "__init__.py").read_text(encoding="utf-8") == "VERSION = 2\n"


class FakePip:
    """Stands in for `pip install --target`: records the command and writes one module."""

    def __init__(self, returncode: int = 0) -> None:
        self.commands: list[list[str]] = []
        self.returncode = returncode

    def __call__(self, command: list[str], **_: Any) -> subprocess.CompletedProcess[str]:
        self.commands.append(command)
        target = Path(command[command.index("--target") + 1])
        (target / "bin").mkdir(parents=True)
        (target / "fake_dependency.py").write_text("", encoding="utf-8")
        return subprocess.CompletedProcess(command, self.returncode, "", "ERROR: no network")


@pytest.fixture
def fake_pip(monkeypatch: pytest.MonkeyPatch) -> FakePip:
    pip = FakePip()
    monkeypatch.setattr(subprocess, "run", pip)
    return pip


def test_dependency_layer_command_targets_lambda(fake_pip: FakePip, isolated_build_dir: Path) -> None:
    built = layers.build_dependency_layer()
    (command,) = fake_pip.commands
    assert command[1:4] == ["-m", "pip", "install"]
    for flag in (
        ["--platform", "manylinux2014_aarch64"],
        ["--python-version", "3.12"],
        ["--implementation", "cp"],
        ["-r", str(layers.REQUIREMENTS_FILE)],
    ):
        position = command.index(flag[0])
        assert command[position : position + 2] == flag
    assert "--only-binary=:all:" in command
    assert "--no-deps" in command
    assert built.parent == isolated_build_dir / "dependencies"
    assert built.name.startswith("cp312-manylinux2014_aarch64-")
    assert (built / "python" / "fake_dependency.py").is_file()
    assert not (built / "python" / "bin").exists()


def test_dependency_layer_is_cached_by_requirements(
    fake_pip: FakePip, isolated_build_dir: Path, tmp_path: Path
) -> None:
    first = layers.build_dependency_layer()
    assert layers.build_dependency_layer() == first
    assert len(fake_pip.commands) == 1  # the second synth reuses the build: no pip, no network
    changed = tmp_path / "requirements.txt"
    changed.write_text(
        layers.REQUIREMENTS_FILE.read_text(encoding="utf-8") + "extra==1.0\n", encoding="utf-8"
    )
    second = layers.build_dependency_layer(requirements=(changed,))
    assert second != first
    assert len(fake_pip.commands) == 2
    other_platform = layers.build_dependency_layer(
        target=layers.TargetPlatform(platforms=("manylinux2014_x86_64",), python_version="3.11")
    )
    assert other_platform.name.startswith("cp311-manylinux2014_x86_64-")
    assert second.exists()  # builds for other platforms are not pruned


def test_failed_pip_leaves_nothing_behind(monkeypatch: pytest.MonkeyPatch, isolated_build_dir: Path) -> None:
    monkeypatch.setattr(subprocess, "run", FakePip(returncode=1))
    with pytest.raises(layers.LayerBuildError, match="no network"):
        layers.build_dependency_layer()
    assert list((isolated_build_dir / "dependencies").iterdir()) == []


def test_build_dir_defaults_to_build_layers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(layers.BUILD_DIR_ENV, raising=False)
    assert layers.build_root() == layers.REPO_ROOT / "build" / "layers"
