"""Lambda layers built without Docker: the core package is copied, the dependencies are pip-installed
as wheels for Lambda's platform. Builds are content-keyed and cached, so repeated synths are offline.

Layout under the build root (`build/layers`, or $WP_AGENT_LAYER_BUILD_DIR):

    core/<content-hash>/python/wp_agent/...
    dependencies/<cp312-manylinux2014_aarch64>-<requirements-hash>/python/...

Each leaf directory is an asset root (Lambda unpacks a layer to /opt, so `python/` lands on
sys.path). A directory is written under a temporary name and renamed into place, so a half-built
layer is never reused and concurrent builds cannot see each other's partial output.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

REPO_ROOT: Final = Path(__file__).resolve().parent.parent
CORE_PACKAGE_DIR: Final = REPO_ROOT / "layers" / "core" / "wp_agent"
# Front doors that only run on a person's machine; their SDKs are not in the dependency layer.
LOCAL_ONLY_PACKAGES: Final = frozenset({"mcp_server", "local_api"})
REQUIREMENTS_FILE: Final = REPO_ROOT / "layers" / "dependencies" / "requirements.txt"
RUNTIME_PROVIDED_FILE: Final = REPO_ROOT / "layers" / "dependencies" / "runtime-provided.txt"
FUNCTIONS_DIR: Final = REPO_ROOT / "functions"

BUILD_DIR_ENV: Final = "WP_AGENT_LAYER_BUILD_DIR"
DEFAULT_BUILD_DIR: Final = REPO_ROOT / "build" / "layers"

# Bump when the build recipe changes so old cached layers are not reused.
_RECIPE_VERSION: Final = "1"


class LayerBuildError(RuntimeError):
    """The dependency layer could not be built (usually: no network to PyPI on the first build)."""


@dataclass(frozen=True)
class TargetPlatform:
    """The interpreter a dependency layer is built for (pip's --platform/--python-version)."""

    platforms: tuple[str, ...]
    python_version: str
    implementation: str = "cp"

    @property
    def tag(self) -> str:
        """Short directory-safe label, e.g. cp312-manylinux2014_aarch64."""
        return f"{self.implementation}{self.python_version.replace('.', '')}-{self.platforms[0]}"


LAMBDA_PLATFORM: Final = TargetPlatform(platforms=("manylinux2014_aarch64",), python_version="3.12")
"""Lambda python3.12 on arm64 (Amazon Linux 2023, glibc 2.34: manylinux2014 wheels load there)."""


@dataclass(frozen=True)
class LayerDirs:
    """Asset roots of the two layers (each holds a `python/` directory)."""

    core: Path
    dependencies: Path


def build_root() -> Path:
    """Where layers are built: $WP_AGENT_LAYER_BUILD_DIR if set, else build/layers in the repo."""
    override = os.environ.get(BUILD_DIR_ENV)
    return Path(override).resolve() if override else DEFAULT_BUILD_DIR


def build_layers(root: Path | None = None) -> LayerDirs:
    """Build (or reuse) both layers for Lambda's platform."""
    return LayerDirs(core=build_core_layer(root), dependencies=build_dependency_layer(root))


def build_core_layer(root: Path | None = None, *, source: Path = CORE_PACKAGE_DIR) -> Path:
    """Copy the wp_agent package (without caches) into a content-keyed layer dir."""
    base = (root or build_root()) / "core"
    files = sorted(_core_files(source))
    digest = hashlib.sha256(_RECIPE_VERSION.encode())
    for path in files:
        digest.update(path.relative_to(source).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    final = base / digest.hexdigest()[:16]
    if final.is_dir():
        return final

    def populate(staging: Path) -> None:
        for path in files:
            target = staging / "python" / source.name / path.relative_to(source)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)

    _materialise(final, populate)
    _prune_siblings(final, prefix="")
    return final


def build_dependency_layer(
    root: Path | None = None,
    *,
    target: TargetPlatform = LAMBDA_PLATFORM,
    requirements: Sequence[Path] = (REQUIREMENTS_FILE,),
) -> Path:
    """pip-install the pinned requirements as wheels for `target`; reuse the cached build if present.

    The cache key is a hash of the requirement files, the target platform and the recipe version.
    The first build needs network access to PyPI; later builds with the same inputs do not.
    """
    base = (root or build_root()) / "dependencies"
    digest = hashlib.sha256(_RECIPE_VERSION.encode())
    digest.update(repr((target.platforms, target.python_version, target.implementation)).encode())
    for requirement_file in requirements:
        digest.update(requirement_file.read_bytes() + b"\0")
    final = base / f"{target.tag}-{digest.hexdigest()[:16]}"
    if final.is_dir():
        return final

    def populate(staging: Path) -> None:
        _pip_install(staging / "python", target=target, requirements=requirements)
        _strip_build_noise(staging / "python")

    _materialise(final, populate)
    _prune_siblings(final, prefix=f"{target.tag}-")
    return final


def pip_install_command(
    destination: Path, *, target: TargetPlatform, requirements: Sequence[Path]
) -> list[str]:
    """The pip command line for one dependency layer (exposed for the README and the tests)."""
    command = [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--no-deps",  # the requirement file is the complete lock; nothing else may sneak in
        "--only-binary=:all:",
        "--implementation",
        target.implementation,
        "--python-version",
        target.python_version,
    ]
    for platform in target.platforms:
        command += ["--platform", platform]
    command += [
        "--target",
        str(destination),
        "--no-compile",  # .pyc for 3.12 cannot be produced by this interpreter; Lambda compiles lazily
        "--disable-pip-version-check",
        "--no-input",
        "--quiet",
    ]
    for requirement_file in requirements:
        command += ["-r", str(requirement_file)]
    return command


def _core_files(source: Path) -> Iterable[Path]:
    if not (source / "__init__.py").is_file():
        raise LayerBuildError(f"core package not found at {source}")
    for path in source.rglob("*"):
        relative = path.relative_to(source)
        if not path.is_file():
            continue
        if any(part == "__pycache__" for part in relative.parts) or path.suffix in {".pyc", ".pyo"}:
            continue
        if relative.parts[0] in LOCAL_ONLY_PACKAGES:
            continue
        yield path


def _pip_install(destination: Path, *, target: TargetPlatform, requirements: Sequence[Path]) -> None:
    command = pip_install_command(destination, target=target, requirements=requirements)
    completed = subprocess.run(command, capture_output=True, text=True, check=False)  # noqa: S603
    if completed.returncode != 0:
        tail = "\n".join(completed.stderr.strip().splitlines()[-15:])
        raise LayerBuildError(
            f"pip could not build the {target.tag} dependency layer (exit {completed.returncode}). "
            "The first build downloads wheels from PyPI; later builds reuse "
            f"{build_root()}.\n{tail}"
        )


def _strip_build_noise(site: Path) -> None:
    """Drop what pip --target leaves that Lambda never imports (console scripts, caches)."""
    shutil.rmtree(site / "bin", ignore_errors=True)
    for cache in list(site.rglob("__pycache__")):
        shutil.rmtree(cache, ignore_errors=True)


def _materialise(final: Path, populate: Callable[[Path], None]) -> None:
    final.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{final.name}.", dir=final.parent))
    try:
        populate(staging)
        try:
            staging.rename(final)
        except OSError:
            if not final.is_dir():  # lost a race to an identical build: theirs is as good as ours
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _prune_siblings(keep: Path, *, prefix: str) -> None:
    """Remove older builds of the same kind so build/ does not grow with every requirements change."""
    for sibling in keep.parent.iterdir():
        # Names starting with "." are another process's staging directories: leave them alone.
        stale = sibling != keep and sibling.is_dir() and sibling.name.startswith(prefix)
        if stale and not sibling.name.startswith("."):
            shutil.rmtree(sibling, ignore_errors=True)
