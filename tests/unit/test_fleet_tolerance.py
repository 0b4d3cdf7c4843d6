"""A fleet's tolerated failures, as a count or as a percentage of its sites: the percentage draws the line
where Step Functions' ToleratedFailurePercentage does (failures / sites above it), as a whole count both
engines apply; the API and the CLI refuse what is not one of the two."""

from __future__ import annotations

import argparse

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from wp_agent.cli import fleet as fleet_cli
from wp_agent.cli.failures import CliError
from wp_agent.fleet import runs
from wp_agent.fleet.engine import FleetRequest
from wp_agent.models.fleet import FleetRunRequest, SiteResult, SiteStatus, tolerated_count


@given(percentage=st.integers(0, 100), sites=st.integers(1, 200), failed=st.integers(0, 200))
def test_the_count_stops_exactly_where_the_percentage_is_exceeded(
    percentage: int, sites: int, failed: int
) -> None:
    failed = min(failed, sites)
    results = [SiteResult(site=f"s{i}", status=SiteStatus.FAILED) for i in range(failed)]
    exceeded = failed * 100 > percentage * sites  # failed / sites > percentage %, in whole numbers
    assert runs.over_tolerance(results, tolerated_count(percentage, sites)) == exceeded


def _request(**fields: object) -> FleetRunRequest:
    return FleetRunRequest.model_validate({"message": "更新して", "tag": "clients", **fields})


def test_the_api_takes_a_count_or_a_percentage_never_both() -> None:
    assert _request(toleratedFailures=2).tolerated(10) == 2
    assert _request(toleratedFailurePercentage=25).tolerated(10) == 2  # 2.5 sites: two may fail, not three
    assert _request().tolerated(10) == 0
    for wrong in (
        {"toleratedFailures": 1, "toleratedFailurePercentage": 10},
        {"toleratedFailurePercentage": 101},
        {"toleratedFailurePercentage": -1},
        {"toleratedFailurePercentage": 12.5},
        {"toleratedFailurePercentage": None},
    ):
        with pytest.raises(ValidationError):
            _request(**wrong)


def _cli(tolerated: str, sites: int = 4) -> FleetRequest:
    args = argparse.Namespace(canary=1, concurrency=5, tolerated_failures=tolerated, user="u1")
    return fleet_cli._request(args, [f"s{i}" for i in range(sites)], "更新して", slots=5)


def test_the_cli_takes_a_count_or_a_percentage_of_the_sites() -> None:
    assert (_cli("2").tolerated_failures, _cli("2").tolerated_failure_percentage) == (2, None)
    assert (_cli("25%").tolerated_failures, _cli("25%").tolerated_failure_percentage) == (1, 25)
    assert _cli(" 50 % ", sites=5).tolerated_failures == 2
    for wrong in ("-1", "101%", "1.5", "%", "", "２", "x"):
        with pytest.raises(CliError) as refused:
            _cli(wrong)
        assert refused.value.code == "VALIDATION_ERROR"
        assert "--tolerated-failures" in refused.value.message_ja
