"""OOM floors applied to a profile's recommendations, and the annotation saying so."""

from __future__ import annotations

import datetime

from ballast.api.ballast.v1 import ContainerOOMKills, Recommendation, WorkloadProfileStatus
from ballast.internal.oom import (
    OOMSettings,
    active_floors,
    coupled_containers,
    kills_from,
    raised_for,
    record,
    status_entry,
    with_floors,
)
from ballast.internal.oom.kills import ObservedKill

MI = 2**20
T0 = datetime.datetime(2026, 3, 1, 12, tzinfo=datetime.UTC)


def status_with_floor(floor: str | None, until: datetime.datetime | None = None) -> WorkloadProfileStatus:
    entry = ContainerOOMKills(container="app", count=1, floor=floor, floor_until=until, namespaces=["team-a"])
    return WorkloadProfileStatus(oom_kills=[entry])


def test_floor_raises_a_lower_recommended_limit_and_keeps_the_request() -> None:
    recommendations = {"app": {"memory": Recommendation(request="300Mi", limit="500Mi"),
                               "cpu": Recommendation(request="100m")}}  # fmt: skip
    merged = with_floors(recommendations, active_floors(status_with_floor("600Mi")))
    assert merged["app"]["memory"] == Recommendation(request="300Mi", limit="600Mi")
    assert merged["app"]["cpu"] == Recommendation(request="100m")
    assert recommendations["app"]["memory"].limit == "500Mi"  # not changed in place


def test_floor_never_lowers_a_higher_limit() -> None:
    merged = with_floors({"app": {"memory": Recommendation(limit="1Gi")}}, active_floors(status_with_floor("600Mi")))
    assert merged["app"]["memory"].limit == "1Gi"


def test_a_container_without_ready_recommendations_gets_the_floor_alone() -> None:
    merged = with_floors({}, active_floors(status_with_floor("600Mi")))
    assert merged == {"app": {"memory": Recommendation(limit="600Mi")}}


def test_lapsed_and_unreadable_floors_are_ignored() -> None:
    assert active_floors(status_with_floor("600Mi", T0), now=T0) == {}
    assert active_floors(status_with_floor("lots")) == {}
    assert active_floors(status_with_floor(None)) == {}
    assert active_floors(None) == {}


def test_raised_for_names_the_containers_the_floor_set() -> None:
    floors = active_floors(status_with_floor("600Mi"))
    assert raised_for(floors, {"app": 600 * MI}) == "app=600Mi after OOM kills in team-a"
    assert raised_for(floors, {"app": 700 * MI}) is None


def test_status_entry_round_trips_the_kills() -> None:
    seen = ObservedKill("app", "app-1", "team-a", "u-1", T0, 500 * MI)
    state = record([], [seen], OOMSettings(), now=T0, ceiling=None)
    entry = status_entry("app", state)
    assert entry is not None
    assert entry["count"] == 1
    assert (entry["floor"], entry["floorUntil"], entry["lastLimit"]) == ("600Mi", "2026-03-02T12:00:00Z", "500Mi")
    model = ContainerOOMKills.model_validate(entry)
    assert kills_from(model) == list(state.kills)
    assert status_entry("app", record([], [], OOMSettings(), now=T0, ceiling=None)) is None


def test_a_guaranteed_container_gets_its_request_raised_with_the_limit() -> None:
    pod = {"spec": {"containers": [{"name": "app", "resources": {"requests": {"memory": "500Mi"},
                                                                 "limits": {"memory": "500Mi"}}}]}}  # fmt: skip
    floors = active_floors(status_with_floor("600Mi"))
    coupled = coupled_containers(pod, {})
    assert coupled == {"app"}
    assert with_floors({}, floors, coupled=coupled)["app"]["memory"] == Recommendation(request="600Mi", limit="600Mi")


def test_a_recommendation_that_splits_request_and_limit_is_not_coupled() -> None:
    pod = {"spec": {"containers": [{"name": "app", "resources": {"requests": {"memory": "500Mi"},
                                                                 "limits": {"memory": "500Mi"}}}]}}  # fmt: skip
    recommendations = {"app": {"memory": Recommendation(request="300Mi", limit="450Mi")}}
    assert coupled_containers(pod, recommendations) == set()
