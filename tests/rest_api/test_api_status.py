"""GET /status/: who is calling, and the health of search, as the caller sees it."""

from __future__ import annotations

from memory_platform import heartbeat
from tests.rest_api.conftest import API, ROLES, Api, World


def test_status_names_the_caller(api: Api, world: World) -> None:
    heartbeat.beat(), heartbeat.beat(heartbeat.BEAT)  # a worker and beat are alive
    for role in ROLES:
        response = api(role).get(f"{API}/status/")

        assert response.status_code == 200
        body = response.json()
        assert (body["status"], body["organization"], body["role"]) == ("ok", "acme", role)
        assert body["principal"].startswith("token mp_")
        assert body["database"]["ok"] is True
        assert body["memories"]["total"] == 4  # memory, other, locked, deprecated: the deleted one is not counted
        assert body["memories"]["by_status"] == {"active": 2, "locked": 1, "deprecated": 1}
        assert body["repositories"] == ["payments-api"]  # so an agent can name one without guessing


def test_status_reports_a_stopped_worker(api: Api, world: World) -> None:
    body = api("reader").get(f"{API}/status/").json()

    assert body["status"] == "degraded"
    assert body["worker"]["ok"] is False and "is a worker running?" in body["worker"]["problem"]
