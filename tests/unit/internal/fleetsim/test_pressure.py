"""The kubelet's order under node memory pressure: usage above request first, then priority, then usage minus
request; pods go one at a time until the rest fit."""

from __future__ import annotations

from ballast.internal.fleetsim.pressure import Candidate, eviction_order, to_evict

MI = 2.0**20


def names(candidates: list[Candidate]) -> list[str]:
    return [candidate.pod for candidate in candidates]


def test_pods_above_their_request_go_before_pods_within_it_whatever_their_usage() -> None:
    within = Candidate("big-within", usage=900 * MI, request=1000 * MI)
    above = Candidate("small-above", usage=200 * MI, request=100 * MI)

    assert names(eviction_order([within, above])) == ["small-above", "big-within"]


def test_among_pods_above_request_lower_priority_goes_first() -> None:
    important = Candidate("important", usage=900 * MI, request=100 * MI, priority=1000)
    ordinary = Candidate("ordinary", usage=200 * MI, request=100 * MI, priority=0)

    assert names(eviction_order([important, ordinary])) == ["ordinary", "important"]


def test_at_equal_priority_the_largest_usage_above_request_goes_first_then_the_name() -> None:
    pods = [
        Candidate("b", usage=300 * MI, request=200 * MI),  # 100 Mi above
        Candidate("c", usage=500 * MI, request=100 * MI),  # 400 Mi above
        Candidate("a", usage=200 * MI, request=100 * MI),  # 100 Mi above, ties with b: by name
    ]

    assert names(eviction_order(pods)) == ["c", "a", "b"]


def test_pods_go_one_at_a_time_until_the_rest_fit() -> None:
    pods = [
        Candidate("first", usage=500 * MI, request=100 * MI),
        Candidate("second", usage=300 * MI, request=100 * MI),
        Candidate("third", usage=300 * MI, request=1000 * MI),
    ]

    # 1100 Mi on a node of 700: the first leaves 600, which fits; of 500: the second must go too.
    assert names(to_evict(pods, 700 * MI)) == ["first"]
    assert names(to_evict(pods, 500 * MI)) == ["first", "second"]
    assert to_evict(pods, 1100 * MI) == []
