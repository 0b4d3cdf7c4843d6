"""Spec §3.2 limits under contention (many threads against moto's DynamoDB)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from tests.fakes.aws import TABLES, LostAnswer, sdk_retries_run_out, sdk_retry_meets_the_write
from wp_agent.adapters.aws.rate_limiter import DynamoRateLimiter
from wp_agent.config import LambdaSettings
from wp_agent.errors import AgentErrorCode, WpAgentError

pytestmark = pytest.mark.usefixtures("aws")


class WaitedError(Exception):
    """Raised by the fake sleep so a caller over the limit shows it would have waited."""


class FakeClock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def limiter(clock: Any = None, sleep: Any = time.sleep, **settings: Any) -> DynamoRateLimiter:
    """A limiter on `clock` (default: the product's own clock)."""
    timing = {"sleep": sleep} | ({"clock": clock} if clock is not None else {})
    return DynamoRateLimiter(TABLES["rate_limits"], LambdaSettings(**settings), **timing)


def raise_waited(seconds: float) -> None:
    raise WaitedError


def test_model_calls_per_minute_hold_exactly_under_contention() -> None:
    clock = FakeClock(1_000_020.0)
    limiters = [limiter(clock, raise_waited) for _ in range(4)]  # four "Lambda instances"

    def call(i: int) -> bool:
        try:
            limiters[i % 4].before_model_call()
        except WaitedError:
            return False
        return True

    with ThreadPoolExecutor(max_workers=16) as pool:
        results = list(pool.map(call, range(100)))
    assert results.count(True) == 60
    clock.now += 60  # next window
    with ThreadPoolExecutor(max_workers=16) as pool:
        assert list(pool.map(call, range(70))).count(True) == 60


def test_model_caller_over_the_limit_waits_for_the_next_window_then_proceeds() -> None:
    clock = FakeClock(60 * 33_333 + 10.0)  # 10 s into a window
    waits: list[float] = []

    def sleep(seconds: float) -> None:
        waits.append(seconds)
        clock.now += seconds

    limit = limiter(clock, sleep, wp_agent_model_calls_per_minute=2)
    for _ in range(3):
        limit.before_model_call()
    assert len(waits) == 1
    assert 50 <= waits[0] <= 51  # until the next minute (+ jitter)


def test_model_wait_is_bounded() -> None:
    clock = FakeClock(60 * 50_000 + 5.0)
    rival = limiter(clock, raise_waited, wp_agent_model_calls_per_minute=1)

    def sleep_while_a_rival_takes_the_next_window(seconds: float) -> None:
        clock.now += seconds
        rival.before_model_call()

    rival.before_model_call()
    with pytest.raises(WpAgentError) as excinfo:
        limiter(
            clock, sleep_while_a_rival_takes_the_next_window, wp_agent_model_calls_per_minute=1
        ).before_model_call()
    assert excinfo.value.code is AgentErrorCode.API_RATE_LIMITED
    assert "60" not in excinfo.value.message_ja or "回/分" in excinfo.value.message_ja


def test_commands_per_user_hold_exactly_and_refuse_in_japanese() -> None:
    clock = FakeClock(4_000_000.0)
    limit = limiter(clock)

    def call(numbered: tuple[int, str]) -> str | None:
        try:
            limit.before_command(numbered[1], f"s/r/toolu_{numbered[0]}")
        except WpAgentError as exc:
            return exc.message_ja
        return None

    with ThreadPoolExecutor(max_workers=12) as pool:
        results = list(pool.map(call, enumerate(["taro"] * 30 + ["hanako"] * 5)))
    refused = [r for r in results[:30] if r is not None]
    assert len(refused) == 20
    assert "1分あたり10回" in refused[0]
    assert all(r is None for r in results[30:])


def test_ssh_slots_per_target_never_exceed_five() -> None:
    """Eight commands on one target from three "Lambda instances": five hold a slot together while
    the other three find every slot taken and wait. The holders keep their slots until released
    together, so what is seen is the limit itself, not how fast this machine happens to be."""
    changed = threading.Condition()
    holding = peak = 0
    waiters: set[int] = set()  # threads that found all five slots taken
    release = threading.Event()

    def poll_again(seconds: float) -> None:
        with changed:
            waiters.add(threading.get_ident())
            changed.notify_all()
        time.sleep(seconds)

    limiters = [limiter(sleep=poll_again) for _ in range(3)]

    def command(i: int) -> None:
        nonlocal holding, peak
        with limiters[i % 3].command_slot("site-a"):
            with changed:
                holding += 1
                peak = max(peak, holding)
                changed.notify_all()
            release.wait()
            with changed:
                holding -= 1

    with ThreadPoolExecutor(max_workers=8) as pool:
        try:
            commands = [pool.submit(command, i) for i in range(8)]
            with changed:  # the timeout only ends a hang; it asserts nothing about speed
                full = changed.wait_for(lambda: holding == 5 and len(waiters) == 3, timeout=60)
                held_together, waiting = holding, len(waiters)
        finally:
            release.set()
        for finished in commands:
            finished.result()  # the three that waited ran once slots were given back
    assert full, f"{held_together} held a slot while {waiting} waited"
    assert (held_together, peak, holding) == (5, 5, 0)


def test_slots_are_per_target() -> None:
    limit = limiter()
    holds = [limit.command_slot("site-a") for _ in range(5)]
    for hold in holds:
        hold.__enter__()
    with limit.command_slot("site-b"):
        pass
    for hold in holds:
        hold.__exit__(None, None, None)


@pytest.mark.parametrize(
    ("command_ms", "lease_seconds"), [(10_000, 900 + 10 + 5 + 30), (600_000, 900 + 600 + 5 + 30)]
)
def test_an_abandoned_lease_frees_itself_once_no_command_of_its_holder_can_run(
    command_ms: int, lease_seconds: int
) -> None:
    # A Lambda that died holding its slots. A command it started in its last moment (after
    # however much connecting) may still run on the server until the remote `timeout` kills it:
    # Lambda's 15 minutes + the command timeout + the 5 s kill delay; then the 30 s margin.
    clock = FakeClock(5_000_000.0 + command_ms)
    timing = {"wp_cli_timeout": command_ms, "vps_ssh_connect_timeout": 60.0}
    crashed = limiter(clock, raise_waited, **timing)
    held = [crashed.command_slot("site-a") for _ in range(5)]
    for hold in held:
        hold.__enter__()
    taken_at = clock.now
    with pytest.raises(WaitedError), limiter(clock, raise_waited, **timing).command_slot("site-a"):
        pass
    clock.now = taken_at + lease_seconds - 1
    with pytest.raises(WaitedError), limiter(clock, raise_waited, **timing).command_slot("site-a"):
        pass
    clock.now = taken_at + lease_seconds + 2  # (leases are stored in whole seconds, rounded up)
    successors = [limiter(clock, raise_waited, **timing).command_slot("site-a") for _ in range(5)]
    for hold in successors:
        hold.__enter__()  # every expired slot is taken over
    for hold in held:  # the "dead" holder's late release must not free someone else's lease
        hold.__exit__(None, None, None)
    with pytest.raises(WaitedError), limiter(clock, raise_waited, **timing).command_slot("site-a"):
        pass
    for hold in successors:
        hold.__exit__(None, None, None)


def test_waiting_for_a_slot_is_bounded() -> None:
    clock = FakeClock(6_000_000.0)

    def sleep(seconds: float) -> None:
        clock.now += 5

    holder = limiter(clock, sleep, wp_agent_ssh_slots_per_target=1)
    held = holder.command_slot("site-a")
    held.__enter__()
    with (
        pytest.raises(WpAgentError) as excinfo,
        limiter(clock, sleep, wp_agent_ssh_slots_per_target=1).command_slot("site-a"),
    ):
        pass
    assert excinfo.value.code is AgentErrorCode.COMMAND_TIMEOUT
    assert "同時接続数の上限" in excinfo.value.message_ja
    held.__exit__(None, None, None)


def test_utilisation_is_reported() -> None:
    seen: list[tuple[str, float]] = []
    limit = DynamoRateLimiter(
        TABLES["rate_limits"],
        LambdaSettings(),
        clock=FakeClock(7_000_000.0),
        on_utilisation=lambda n, u: seen.append((n, u)),
    )
    for i in range(8):
        limit.before_command("taro", f"s/r/toolu_{i}")
    assert seen[-1] == ("commands_per_user", 0.8)


def test_a_slot_that_cannot_be_released_leaves_the_command_done(monkeypatch: pytest.MonkeyPatch) -> None:
    from botocore.exceptions import EndpointConnectionError

    clock = FakeClock(7_000_000.0)
    limit = limiter(clock, raise_waited, wp_agent_ssh_slots_per_target=1)
    table = limit._table

    class ReleaseFails:
        def __getattr__(self, name: str) -> Any:
            return getattr(table, name)

        def delete_item(self, **kwargs: Any) -> Any:
            raise EndpointConnectionError(endpoint_url="https://dynamodb.ap-northeast-1.amazonaws.com")

    monkeypatch.setattr(DynamoRateLimiter, "_table", property(lambda self: ReleaseFails()))
    ran = []
    with limit.command_slot("site-c"):
        ran.append("post list")
    assert ran == ["post list"]  # no error after the command ran
    monkeypatch.undo()
    with (
        pytest.raises(WaitedError),
        limiter(clock, raise_waited, wp_agent_ssh_slots_per_target=1).command_slot("site-c"),
    ):
        pass  # still held until its lease expires


@pytest.mark.parametrize("then", [sdk_retry_meets_the_write, sdk_retries_run_out])
def test_a_lease_whose_answer_was_lost_leaks_no_slot(
    monkeypatch: pytest.MonkeyPatch, then: Callable[[Any, dict[str, Any]], Any]
) -> None:
    """Every lease write lands and loses its answer: the SDK's retry meets our own lease (taken),
    or its retries run out (given back). Either way no slot stays held by nobody."""
    clock = FakeClock(8_000_000.0)
    limit = limiter(clock, raise_waited, wp_agent_ssh_slots_per_target=2)
    table = limit._table
    monkeypatch.setattr(
        DynamoRateLimiter, "_table", property(lambda self: LostAnswer(table, "put_item", then))
    )
    ran: list[str] = []
    for command in ("post list", "user list", "option get home"):
        try:
            with limit.command_slot("site-l"):
                ran.append(command)
        except ConnectionError:
            pass  # the retries ran out: the command did not run, and the slot was given back
    monkeypatch.undo()
    assert ran == (["post list", "user list", "option get home"] if then is sdk_retry_meets_the_write else [])
    others = limiter(clock, raise_waited, wp_agent_ssh_slots_per_target=2)
    both = [others.command_slot("site-l") for _ in range(2)]
    for hold in both:
        hold.__enter__()  # both slots are free at once: nothing leaked
    for hold in both:
        hold.__exit__(None, None, None)


def test_a_command_is_counted_once_by_its_intent_even_in_a_later_window() -> None:
    """A retried turn and an approved command take the count their intent already holds: passed and not
    counted again, also after the minute has turned; a new command at the limit is refused."""
    clock = FakeClock(8_000_000.0)
    limit = limiter(clock, wp_agent_commands_per_user_per_minute=2)
    limit.before_command("taro", "s1/run_1/toolu_a")
    limit.before_command("taro", "s1/run_1/toolu_a")  # a retry of the same command
    limit.before_command("taro", "s1/run_1/toolu_b")
    with pytest.raises(WpAgentError) as refused:
        limit.before_command("taro", "s1/run_1/toolu_c")
    assert refused.value.code is AgentErrorCode.COMMAND_BLOCKED
    limit.before_command("taro", "s1/run_1/toolu_b")  # held when the window was full: still passes
    clock.now += 60
    limit.before_command("taro", "s1/run_1/toolu_a")  # approved a minute later: its count stands
    limit.before_command("taro", "s1/run_1/toolu_c")
    limit.before_command("taro", "s1/run_1/toolu_d")
    with pytest.raises(WpAgentError):
        limit.before_command("taro", "s1/run_1/toolu_e")  # the new window holds c and d only


def test_commands_taken_again_at_once_are_counted_once() -> None:
    """Five commands, each taken four times at once from four "instances", at a limit of three: three
    commands pass every time, two are refused every time."""
    limiters = [limiter(FakeClock(9_000_000.0), wp_agent_commands_per_user_per_minute=3) for _ in range(4)]

    def take(i: int) -> tuple[int, bool]:
        try:
            limiters[i % 4].before_command("taro", f"s/r/toolu_{i % 5}")
        except WpAgentError:
            return i % 5, False
        return i % 5, True

    with ThreadPoolExecutor(max_workers=10) as pool:
        results = list(pool.map(take, range(20)))
    by_intent = {intent: {ok for i, ok in results if i == intent} for intent in range(5)}
    assert sorted(len(v) for v in by_intent.values()) == [1] * 5, by_intent
    assert sum(1 for v in by_intent.values() if v == {True}) == 3


@pytest.mark.parametrize("then", [sdk_retry_meets_the_write, sdk_retries_run_out])
def test_a_count_whose_answer_was_lost_is_not_taken_twice(
    monkeypatch: pytest.MonkeyPatch, then: Callable[[Any, dict[str, Any]], Any]
) -> None:
    """The transaction lands and its answer is lost: the SDK's retry meets our own intent (passed); when
    the retries run out the caller fails, and its retried turn finds the count taken."""
    clock = FakeClock(10_000_000.0)
    limit = limiter(clock, wp_agent_commands_per_user_per_minute=2)
    client = limit._table.meta.client
    write = client.transact_write_items

    def lost(**kwargs: Any) -> Any:
        write(**kwargs)
        return then(write, kwargs)

    monkeypatch.setattr(client, "transact_write_items", lost)
    if then is sdk_retries_run_out:
        with pytest.raises(ConnectionError):
            limit.before_command("taro", "s/r/toolu_a")
    else:
        limit.before_command("taro", "s/r/toolu_a")
    monkeypatch.undo()
    limit.before_command("taro", "s/r/toolu_a")  # the retried turn
    limit.before_command("taro", "s/r/toolu_b")
    with pytest.raises(WpAgentError):
        limit.before_command("taro", "s/r/toolu_c")
