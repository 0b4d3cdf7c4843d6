"""The serverless fixture's container model: one invocation at a time per container, warm reuse,
module state of its own for every container (as Lambda runs a function)."""

from __future__ import annotations

import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.fakes.lambda_containers import FunctionContainers

HANDLER = """
from container_probe_clock import together  # imported once, shared (like the test's own modules)
invocations = []  # module state: what this container has served

def lambda_handler(event, context):
    invocations.append(event["n"])
    if event.get("together"):
        together.wait(timeout=10)  # both invocations are inside at once
    return {"container": id(invocations), "served": list(invocations)}
"""


@pytest.fixture
def function(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FunctionContainers:
    (tmp_path / "container_probe_handler.py").write_text(HANDLER, encoding="utf-8")
    (tmp_path / "container_probe_clock.py").write_text(
        "import threading\ntogether = threading.Barrier(2)\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("container_probe_handler", "container_probe_clock"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    return FunctionContainers("container_probe_handler")


def test_sequential_invocations_reuse_the_warm_container(function: FunctionContainers) -> None:
    first = function.lambda_handler({"n": 1}, None)
    second = function.lambda_handler({"n": 2}, None)
    assert first["container"] == second["container"]
    assert second["served"] == [1, 2]
    assert len(function.started) == 1


def test_concurrent_invocations_get_containers_of_their_own(function: FunctionContainers) -> None:
    with ThreadPoolExecutor(max_workers=2) as pool:
        answers = list(pool.map(lambda n: function.lambda_handler({"n": n, "together": True}, None), [1, 2]))
    assert answers[0]["container"] != answers[1]["container"]
    assert sorted(a["served"][0] for a in answers) == [1, 2]  # neither saw the other's state
    assert len(function.started) == 2
    again = function.lambda_handler({"n": 3}, None)  # a warm one serves the next
    assert again["container"] in {a["container"] for a in answers}
    assert len(function.started) == 2
