"""WP-CLI argv split into positional words and `--name[=value]` options, as WP-CLI itself does."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# WP-CLI's Configurator::extract_assoc(): `--name`, `--name=value` (name without `=`, at least one
# character); `--`, `--=x` and `-x` are positional words.
_ASSOC = re.compile(r"^--([^=]+)(?:(=)(.*))?$", re.S)


@dataclass(frozen=True)
class CliOption:
    name: str  # lower-cased, without the leading dashes
    value: str | None  # None for a bare flag
    token: str


@dataclass(frozen=True)
class ParsedCommand:
    argv: tuple[str, ...]
    positionals: tuple[str, ...]
    options: tuple[CliOption, ...] = field(default_factory=tuple)

    @classmethod
    def from_argv(cls, argv: tuple[str, ...]) -> ParsedCommand:
        positionals: list[str] = []
        options: list[CliOption] = []
        for token in argv:
            # WP-CLI treats `--x` / `--x=v` as associative args anywhere; everything else is positional.
            match = _ASSOC.match(token)
            if match:
                options.append(
                    CliOption(match.group(1).lower(), match.group(3) if match.group(2) else None, token)
                )
            else:
                positionals.append(token)
        return cls(argv, tuple(positionals), tuple(options))

    def has_flag(self, *names: str) -> bool:
        return any(o.name in names for o in self.options)

    def option_values(self, *names: str) -> list[str]:
        return [o.value for o in self.options if o.name in names and o.value is not None]

    def url_tokens(self) -> tuple[str, ...]:
        """The `--url=…` tokens as given: the site of a network the command goes to (a read that
        checks the command's site carries them)."""
        return tuple(o.token for o in self.options if o.name == "url")

    @staticmethod
    def is_option(token: str) -> bool:
        return _ASSOC.match(token) is not None

    def args_after(self, path: tuple[str, ...]) -> tuple[str, ...]:
        return self.positionals[len(path) :]
