"""What a simulated command sees while it runs: the site, the selected blog, the user, output."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NoReturn

from wp_agent.simulator.model import Blog, Network
from wp_agent.simulator.output import Output
from wp_agent.simulator.wordpress.clock import Clock

StdinReader = Callable[[], str]


@dataclass
class Context:
    out: Output
    network: Network
    blog: Blog
    clock: Clock
    command_path: str
    wp_path: str
    current_user_id: int = 0
    assume_yes: bool = False
    read_stdin: StdinReader = field(default=lambda: "")

    def error(self, message: str) -> NoReturn:
        self.out.error(message)

    def confirm(self, question: str) -> None:
        """`WP_CLI::confirm`: anything but "y" on STDIN ends the command with exit code 0."""
        if self.assume_yes:
            return
        self.out.write(f"{question} [y/n] ")
        answer = self.read_stdin().split("\n", 1)[0].strip().lower()
        if answer != "y":
            self.out.halt(0)

    @property
    def multisite(self) -> bool:
        return self.network.multisite

    def now_local(self) -> str:
        return self.clock.local(self.blog)

    def now_gmt(self) -> str:
        return self.clock.gmt()
