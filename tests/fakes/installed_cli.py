"""wp-agent installed the way a site owner installs it (pipx / uv tool: its own virtualenv, the built
wheel, the runtime dependencies only), for tests that run it outside the checkout.

The wheel is really built (`pip wheel`, PEP 517) and really installed into a fresh virtualenv. Its
runtime dependencies are not downloaded again: the closure of the wheel's own `Requires-Dist` (no
extras) is linked from this checkout's virtualenv into a directory the new one reads through a `.pth`
file, so whatever belongs only to the dev and infra extras (pytest, moto, aws-cdk-lib, …) is absent.
`WP_AGENT_INSTALLED_VENV=<venv>` uses a virtualenv made with a plain `pip install <wheel>` instead.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import venv
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement

REPO = Path(__file__).resolve().parents[2]
INSTALLED_VENV_ENV = "WP_AGENT_INSTALLED_VENV"
_PIP_TIMEOUT_SECONDS = 240


def runtime_closure(
    name: str = "wp-agent", extras: frozenset[str] = frozenset()
) -> dict[str, metadata.Distribution]:
    """Every distribution `name` needs at run time (its extras only when asked for), by normalised name."""
    found: dict[str, metadata.Distribution] = {}
    seen: set[tuple[str, frozenset[str]]] = set()
    pending: list[tuple[str, frozenset[str]]] = [(name, extras)]
    while pending:
        wanted, wanted_extras = pending.pop()
        dist = metadata.distribution(wanted)
        key = dist.metadata["Name"].lower().replace("_", "-")
        if (key, wanted_extras) in seen:
            continue
        seen.add((key, wanted_extras))
        found[key] = dist
        for text in dist.requires or []:
            requirement = Requirement(text)
            environments = [{"extra": extra} for extra in wanted_extras] or [{"extra": ""}]
            if requirement.marker is None or any(requirement.marker.evaluate(e) for e in environments):
                pending.append((requirement.name, frozenset(requirement.extras)))
    found.pop("wp-agent", None)
    return found


def _link_distributions(distributions: dict[str, metadata.Distribution], target: Path) -> None:
    target.mkdir(parents=True, exist_ok=True)
    for dist in distributions.values():
        base = Path(str(dist.locate_file("")))
        for entry in {Path(str(f)).parts[0] for f in dist.files or [] if not str(f).startswith("..")}:
            link = target / entry
            if not link.exists() and (base / entry).exists():
                link.symlink_to(base / entry)


def build_wheel(out: Path) -> Path:
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "--wheel-dir", str(out), str(REPO)],
        check=False, capture_output=True, text=True, timeout=_PIP_TIMEOUT_SECONDS,
    )  # fmt: skip
    # pip's own words when it fails (it fetches the build backend from the package index).
    assert done.returncode == 0, f"pip wheel failed:\n{done.stderr[-3000:]}{done.stdout[-1000:]}"
    [wheel] = out.glob("wp_agent-*.whl")
    return wheel


def install_alone(root: Path) -> Path:
    """A virtualenv under `root` holding the built wheel and its runtime closure; its bin directory."""
    configured = os.environ.get(INSTALLED_VENV_ENV)
    if configured:
        return Path(configured) / "bin"
    wheel = build_wheel(root / "dist")
    environment = root / "venv"
    venv.create(environment, with_pip=False, symlinks=True)
    python = environment / "bin" / "python"
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index", "--quiet",
         str(wheel)],
        check=True, capture_output=True, timeout=_PIP_TIMEOUT_SECONDS,
    )  # fmt: skip
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip
    dependencies = root / "runtime-dependencies"
    _link_distributions(runtime_closure(), dependencies)
    (Path(purelib) / "runtime_dependencies.pth").write_text(f"{dependencies}\n")
    assert sysconfig.get_python_version() in purelib
    return environment / "bin"
