"""A target's members over the API (moto, issue 27): owners, admin members and administrators give and
take roles, every change audited together with it; viewers and editors may not; a repeat after a lost
answer changes nothing; bad input is a 400 that changes nothing."""

from __future__ import annotations

from typing import Any

import boto3
import pytest

from tests.fakes.apigw import ADMIN_ROLE_ARN
from tests.fakes.aws import REGION, TABLES
from tests.integration.test_api import env, schedule_env  # noqa: F401 - the fixtures
from tests.integration.test_target_lifecycle import TARGET, records, send
from wp_agent.adapters.aws.registry import TargetRegistry
from wp_agent.models.target import Role, Target

MEMBERS = f"/v1/targets/{TARGET}/members"


@pytest.fixture
def target(env: dict[str, Any]) -> Target:  # noqa: F811 - the fixture
    target = Target(
        target_id=TARGET,
        host="127.0.0.1",
        secret_arn="arn:aws:secretsmanager:ap-northeast-1:123456789012:secret:wp-agent/targets/site-k",
        owners=["user-1"],
        members={"ed-1": Role.EDITOR, "view-1": Role.VIEWER, "adm-1": Role.ADMIN},
    )
    TargetRegistry(TABLES["registry"]).put(target)
    return target


def stored() -> Target:
    target = TargetRegistry(TABLES["registry"]).get(TARGET)
    assert target is not None
    return target


def test_owners_list_give_and_take_roles_audited(target: Target) -> None:
    status, body = send("GET", MEMBERS)
    assert status == 200, body
    assert body["members"] == [
        {"userId": "user-1", "role": "admin", "owner": True},
        {"userId": "adm-1", "role": "admin", "owner": False},
        {"userId": "ed-1", "role": "editor", "owner": False},
        {"userId": "view-1", "role": "viewer", "owner": False},
    ]
    status, body = send("PUT", f"{MEMBERS}/writer-2", body={"role": "editor"})
    assert (status, body) == (200, {"userId": "writer-2", "role": "editor", "owner": False})
    assert stored().role_of("writer-2") is Role.EDITOR
    status, body = send("PUT", f"{MEMBERS}/ed-1", body={"role": "viewer"})
    assert status == 200
    status, body = send("DELETE", f"{MEMBERS}/view-1")
    assert (status, body["removed"]) == (200, True)
    assert stored().role_of("view-1") is None
    details = [r["details"] for r in records("target_updated")]
    assert details == [
        {"members.writer-2": "- -> editor"},
        {"members.ed-1": "editor -> viewer"},
        {"members.view-1": "viewer -> -"},
    ]
    assert {r["user_id"] for r in records("target_updated")} == {"user-1"}


def test_a_repeat_after_a_lost_answer_changes_nothing(target: Target) -> None:
    assert send("PUT", f"{MEMBERS}/writer-2", body={"role": "editor"})[0] == 200
    assert send("PUT", f"{MEMBERS}/writer-2", body={"role": "editor"})[0] == 200
    assert send("DELETE", f"{MEMBERS}/writer-2")[1]["removed"] is True
    assert send("DELETE", f"{MEMBERS}/writer-2") == (
        200,
        {"targetId": TARGET, "userId": "writer-2", "removed": False, "schedulesDisabled": 0},
    )
    assert len(records("target_updated")) == 2


def test_admin_members_and_administrators_manage_others_do_not(target: Target) -> None:
    assert send("PUT", f"{MEMBERS}/writer-2", body={"role": "viewer"}, user="adm-1")[0] == 200
    status, _ = send(
        "PUT", f"{MEMBERS}/writer-3", body={"role": "admin"}, user=None, caller_arn=ADMIN_ROLE_ARN
    )
    assert status == 200
    for user in ("ed-1", "view-1"):
        for method, body in (("GET", None), ("PUT", {"role": "admin"}), ("DELETE", None)):
            status, answer = send(
                method, MEMBERS if method == "GET" else f"{MEMBERS}/{user}", body=body, user=user
            )
            assert (status, answer["error"]["code"]) == (403, "MEMBER_ADMIN_REQUIRED")
    status, answer = send("PUT", f"{MEMBERS}/stranger-1", body={"role": "admin"}, user="stranger-1")
    assert (status, answer["error"]["code"]) == (404, "TARGET_NOT_FOUND")
    assert stored().role_of("ed-1") is Role.EDITOR
    assert stored().role_of("stranger-1") is None


def test_owners_stay_admins(target: Target) -> None:
    for method, body in (("PUT", {"role": "viewer"}), ("DELETE", None)):
        status, answer = send(method, f"{MEMBERS}/user-1", body=body)
        assert (status, answer["error"]["code"]) == (409, "MEMBER_IS_OWNER")
    assert stored().role_of("user-1") is Role.ADMIN
    assert records("target_updated") == []


@pytest.mark.parametrize(
    "body",
    [{"role": "author"}, {"role": "Admin"}, {"role": None}, {}, {"role": "editor", "x": 1}, {"role": 1}],
)
def test_bad_roles_are_400_and_change_nothing(target: Target, body: dict[str, Any]) -> None:
    status, answer = send("PUT", f"{MEMBERS}/writer-2", body=body)
    assert (status, answer["error"]["code"]) == (400, "VALIDATION_ERROR")
    assert stored() == target


@pytest.mark.parametrize("user_id", ["bad%20user", "a" * 129])
def test_a_bad_user_id_is_400(target: Target, user_id: str) -> None:
    status, answer = send("PUT", f"{MEMBERS}/{user_id}", body={"role": "viewer"})
    assert (status, answer["error"]["code"]) == (400, "VALIDATION_ERROR")
    assert stored() == target


def test_members_see_their_target(target: Target) -> None:
    assert send("GET", f"/v1/targets/{TARGET}", user="view-1")[0] == 200
    assert [t["targetId"] for t in send("GET", "/v1/targets", user="ed-1")[1]["targets"]] == [TARGET]
    assert send("GET", f"/v1/targets/{TARGET}", user="stranger-1")[0] == 404


def test_a_member_reads_only_their_own_place_and_is_told_the_rest_is_the_owners(target: Target) -> None:
    for user in ("view-1", "ed-1", "adm-1"):
        status, seen = send("GET", f"/v1/targets/{TARGET}", user=user)
        assert status == 200
        # Not where its SSH key is kept; of the members, themselves (an admin member manages them all).
        everyone = {u: r.value for u, r in target.members.items()}
        assert seen["members"] == (everyone if user == "adm-1" else {user: everyone[user]})
        assert seen["secretArn"] == "arn:aws:secretsmanager:***"
        listed = send("GET", "/v1/targets", user=user)[1]["targets"]
        assert [(t["members"], t["secretArn"]) for t in listed] == [(seen["members"], seen["secretArn"])]
        # What only owners do answers as such (403), never "no such target" about one they just read.
        for method, path in (
            ("GET", f"/v1/targets/{TARGET}/activity"),
            ("DELETE", f"/v1/targets/{TARGET}"),
            ("POST", f"/v1/targets/{TARGET}/checks"),
            ("PATCH", f"/v1/targets/{TARGET}"),
        ):
            body = {"description": "x"} if method == "PATCH" else None
            status, answer = send(method, path, user=user, body=body)
            assert (status, answer["error"]["code"]) == (403, "OWNER_REQUIRED"), (user, method, path)
    owner = send("GET", f"/v1/targets/{TARGET}", user="user-1")[1]
    assert set(owner["members"]) == {"ed-1", "view-1", "adm-1"}
    assert owner["secretArn"] == target.secret_arn
    for method, path in (("GET", f"/v1/targets/{TARGET}/activity"), ("DELETE", f"/v1/targets/{TARGET}")):
        assert send(method, path, user="stranger-1")[0] == 404
    assert stored() == target  # nothing changed


def test_a_removed_members_schedules_for_the_target_are_disabled(
    target: Target,
    schedule_env: dict[str, Any],  # noqa: F811 - the fixture
) -> None:
    """Each firing would be refused (the creator is no member now): the schedule is disabled at once,
    stays listed, and a repeat of the removal says the same."""
    body = {"expression": "cron(0 9 ? * MON *)", "timezone": "Asia/Tokyo", "targetId": TARGET}
    status, schedule = send(
        "POST", "/v1/schedules", body=body | {"agentInput": {"message": "下書きを一覧にして"}}, user="ed-1"
    )
    assert status == 201, schedule
    status, owners = send(
        "POST", "/v1/schedules", body=body | {"agentInput": {"message": "予約投稿を確認して"}}
    )
    assert status == 201, owners
    scheduler = boto3.client("scheduler", region_name=REGION)

    def state(schedule_id: str) -> str:
        return str(scheduler.get_schedule(GroupName="wp-agent", Name=schedule_id)["State"])

    assert send("DELETE", f"{MEMBERS}/ed-1") == (
        200,
        {"targetId": TARGET, "userId": "ed-1", "removed": True, "schedulesDisabled": 1},
    )
    assert (state(schedule["scheduleId"]), state(owners["scheduleId"])) == ("DISABLED", "ENABLED")
    assert send("DELETE", f"{MEMBERS}/ed-1")[1]["schedulesDisabled"] == 1  # a repeat finishes the job
    assert send("DELETE", f"{MEMBERS}/view-1")[1]["schedulesDisabled"] == 0
