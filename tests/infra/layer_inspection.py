"""Reading a dependency layer: pinned requirements, wheel tags, ELF machine types, the import closure."""

from __future__ import annotations

import email.parser
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import NormalizedName, canonicalize_name
from packaging.version import Version

# What the Lambda python3.12 arm64 runtime reports to environment markers.
LAMBDA_MARKER_ENVIRONMENT = {
    "implementation_name": "cpython",
    "implementation_version": "3.12.0",
    "os_name": "posix",
    "platform_machine": "aarch64",
    "platform_python_implementation": "CPython",
    "platform_release": "",
    "platform_system": "Linux",
    "platform_version": "",
    "python_full_version": "3.12.0",
    "python_version": "3.12",
    "sys_platform": "linux",
}
# Extras the functions use (aws-lambda-powertools[tracer]).
REQUESTED_EXTRAS: Mapping[str, frozenset[str]] = {"aws-lambda-powertools": frozenset({"tracer"})}
ELF_MACHINE_AARCH64 = 183
ELF_MACHINE_X86_64 = 62


def read_pins(path: Path) -> dict[NormalizedName, Version]:
    """name==version lines of a requirements/constraints file (comments and blanks skipped)."""
    pins: dict[NormalizedName, Version] = {}
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.split("#", 1)[0].strip()
        if line:
            requirement = Requirement(line)
            (specifier,) = requirement.specifier
            assert specifier.operator == "==", line
            pins[canonicalize_name(requirement.name)] = Version(specifier.version)
    return pins


@dataclass(frozen=True)
class Distribution:
    """An installed distribution's name, version and declared requirements."""

    name: NormalizedName
    version: Version
    requires: tuple[Requirement, ...]


def distributions_in(site: Path) -> dict[NormalizedName, Distribution]:
    """The *.dist-info distributions installed in a `pip --target` directory."""
    found: dict[NormalizedName, Distribution] = {}
    for metadata_file in site.glob("*.dist-info/METADATA"):
        message = email.parser.Parser().parsestr(metadata_file.read_text(encoding="utf-8"))
        name = canonicalize_name(message["Name"])
        found[name] = Distribution(
            name=name,
            version=Version(message["Version"]),
            requires=tuple(Requirement(value) for value in message.get_all("Requires-Dist") or []),
        )
    return found


def unmet_requirements(
    installed: Iterable[Distribution], available: Mapping[NormalizedName, Version]
) -> list[str]:
    """Requirements (for Lambda's platform and the requested extras) that `available` does not meet."""
    problems = []
    for distribution in installed:
        extras = REQUESTED_EXTRAS.get(distribution.name, frozenset())
        for requirement in distribution.requires:
            if requirement.marker is not None and not any(
                _marker_applies(requirement.marker, extra) for extra in {"", *extras}
            ):
                continue
            name = canonicalize_name(requirement.name)
            if name not in available:
                problems.append(f"{distribution.name} needs {requirement} - not in the layer or runtime")
            elif not requirement.specifier.contains(available[name], prereleases=True):
                problems.append(f"{distribution.name} needs {requirement}, has {available[name]}")
    return problems


def _marker_applies(marker: Marker, extra: str) -> bool:
    return marker.evaluate({**LAMBDA_MARKER_ENVIRONMENT, "extra": extra})


def wheel_tags(site: Path, distribution: str) -> list[str]:
    """The Tag: lines of a distribution's WHEEL file, e.g. cp312-cp312-manylinux_2_17_aarch64."""
    name = canonicalize_name(distribution).replace("-", "_")
    (wheel_file,) = [
        p
        for p in site.glob("*.dist-info/WHEEL")
        if canonicalize_name(p.parent.name.split("-")[0]) == canonicalize_name(name)
    ]
    return [
        line.split(":", 1)[1].strip()
        for line in wheel_file.read_text().splitlines()
        if line.startswith("Tag:")
    ]


def elf_machine(path: Path) -> int:
    """e_machine of an ELF shared object (183 = AArch64, 62 = x86-64)."""
    header = path.read_bytes()[:20]
    assert header[:4] == b"\x7fELF", path
    return int.from_bytes(header[18:20], "little" if header[5] == 1 else "big")
