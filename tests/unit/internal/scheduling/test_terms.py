"""Node selector terms: contradictions (docs/design.md, difference 29), reduction (difference
28) and the well-formedness the merge relies on."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ballast.internal.scheduling import contradiction, product, reduce_terms
from ballast.internal.scheduling.terms import term_key, term_problems

from .builders import keys_of, req, term


@pytest.mark.parametrize(
    ("candidate", "reason"),
    [
        (term(req("k", "In", "x"), req("k", "In", "y")), "k: In sets do not intersect"),
        (term(req("k", "In", "x", "y"), req("k", "NotIn", "y", "x")), "k: In and NotIn exclude every value"),
        (term(req("k", "Exists"), req("k", "DoesNotExist")), "k: DoesNotExist meets Exists"),
        (term(req("k", "In", "x"), req("k", "DoesNotExist")), "k: DoesNotExist meets In"),
        (term(req("k", "Gt", "5"), req("k", "DoesNotExist")), "k: DoesNotExist meets Gt"),
        (term(req("k", "Gt", "5"), req("k", "Lt", "6")), "k: Gt and Lt leave no integer"),
        (term(req("k", "Gt", "5"), req("k", "Lt", "3")), "k: Gt and Lt leave no integer"),
        (term(req("k", "Lt", "0")), "k: Gt and Lt leave no integer"),  # a label value has no sign
        (term(req("k", "In", "x", "9"), req("k", "Lt", "5")), "k: no In value is an integer within Gt and Lt"),
        (
            term(fields=(req("metadata.name", "In", "a"), req("metadata.name", "In", "b"))),
            "metadata.name: In sets do not intersect",
        ),
        (term(req("a"), req("k", "In", "x"), req("k", "In", "y")), "k: In sets do not intersect"),
        ({}, "an empty term matches no node"),
        ({"matchExpressions": [], "matchFields": []}, "an empty term matches no node"),
    ],
)
def test_each_kind_of_contradiction_is_detected(candidate: dict[str, Any], reason: str) -> None:
    assert contradiction(candidate) == reason


@pytest.mark.parametrize(
    "candidate",
    [
        term(req("k", "In", "x", "y"), req("k", "In", "y", "z")),
        term(req("k", "In", "x", "y"), req("k", "NotIn", "x")),
        term(req("k", "NotIn", "x"), req("k", "DoesNotExist")),  # NotIn matches a node without the label
        term(req("k", "Exists"), req("k", "NotIn", "x")),
        term(req("k", "Gt", "5"), req("k", "Lt", "7")),  # 6
        term(req("k", "Gt", "5"), req("k", "NotIn", "6"), req("k", "Lt", "7")),  # "06" is 6 too
        term(req("k", "In", "07", "x"), req("k", "Gt", "5")),  # the scheduler reads "07" as 7
        term(req("k", "In", "x"), req("l", "In", "y")),  # different keys never contradict
        term(req("k", "In", "x"), fields=(req("k", "In", "y"),)),  # a label and a field of the same name
        term(req("k", "Near", "x"), req("k", "In", "y")),  # an operator we cannot read constrains nothing
    ],
)
def test_satisfiable_terms_are_kept(candidate: dict[str, Any]) -> None:
    assert contradiction(candidate) is None


def test_reduce_drops_unsatisfiable_terms_proper_supersets_and_later_duplicates() -> None:
    terms = [
        term(req("a"), req("b")),  # superset of [a]
        term(req("a")),
        term(req("c", "In", "y", "x")),
        term(req("c", "In", "x", "y")),  # equal to the one before (values as sets)
        term(req("d", "In", "x"), req("d", "In", "y")),  # unsatisfiable
        term(req("b"), req("a")),  # superset again, in another order
        term(req("e")),
    ]
    kept, reasons = reduce_terms(terms)
    assert kept == [terms[1], terms[2], terms[6]]
    assert reasons == ["terms[4]: d: In sets do not intersect"]


def test_the_product_puts_the_policy_requirements_first_skips_repeats_and_keeps_empty_terms_empty() -> None:
    merged = product([term(req("a"), req("d"))], [term(req("d"), req("e"))])
    assert keys_of(merged) == [["d", "e", "a"]]
    assert product([term(req("a")), {}], [{}, term(req("b"))]) == [{}, term(req("b"), req("a")), {}, {}]
    assert product([term(req("a"))], [term(fields=(req("metadata.name", "In", "n"),))]) == [
        {"matchExpressions": [req("a")], "matchFields": [req("metadata.name", "In", "n")]}
    ]


@pytest.mark.parametrize(
    ("candidate", "problem"),
    [
        (term(req("k", "Near", "x")), "t.matchExpressions[0].operator: Unsupported value: 'Near'"),
        ({"matchExpressions": [{"key": "k", "operator": "In"}]}, "t.matchExpressions[0].values: Required value"),
        (term({"key": "k", "operator": "Exists", "values": ["x"]}), "t.matchExpressions[0].values: Forbidden"),
        (term(req("k", "Gt", "five")), "t.matchExpressions[0].values: Invalid value: ['five']"),
        (term(req("k", "Lt", "1", "2")), "t.matchExpressions[0].values: Invalid value"),
        (term(fields=(req("metadata.labels", "In", "x"),)), "t.matchFields[0].key: Unsupported value"),
        (term(fields=(req("metadata.name", "In", "x", "y"),)), "t.matchFields[0].values: Required value: exactly one"),
        (term(fields=(req("metadata.name", "Exists"),)), "t.matchFields[0].operator: Unsupported value"),
        ("a term", "t: is not a node selector term"),
    ],
)
def test_a_malformed_term_is_named_by_its_path(candidate: Any, problem: str) -> None:
    problems = term_problems(candidate, "t")
    assert len(problems) == 1
    assert problems[0].startswith(problem)


def test_a_well_formed_term_has_no_problems() -> None:
    candidate = term(
        req("a"), req("b", "NotIn", "x"), req("c", "Exists"), req("d", "DoesNotExist"), req("e", "Gt", "3"),
        fields=(req("metadata.name", "NotIn", "n1"),),
    )  # fmt: skip
    assert term_problems(candidate, "t") == []


# --- the oracle: does some node satisfy the term? ------------------------------------------------------------

_NUMBER = re.compile(r"[0-9]+")


def _requirement_holds(requirement: dict[str, Any], value: str | None) -> bool:
    operator, values = requirement["operator"], requirement.get("values", [])
    if operator == "Exists":
        return value is not None
    if operator == "DoesNotExist":
        return value is None
    if operator == "In":
        return value is not None and value in values
    if operator == "NotIn":
        return value is None or value not in values
    if value is None or _NUMBER.fullmatch(value) is None:
        return False
    return int(value) > int(values[0]) if operator == "Gt" else int(value) < int(values[0])


def _candidates(requirements: list[dict[str, Any]], can_be_absent: bool) -> list[str | None]:
    values: list[str | None] = [None] if can_be_absent else []
    values.append("fresh-value")
    for requirement in requirements:
        for value in requirement.get("values", []):
            values.append(value)
            if _NUMBER.fullmatch(value):
                for number in (int(value) - 1, int(value), int(value) + 1):
                    if number >= 0:
                        values.extend((str(number), f"0{number}"))
    return values


def _satisfiable(candidate: dict[str, Any]) -> bool:
    """Some node's labels and name satisfy every requirement: tried per key over every value that could matter."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for where in ("matchExpressions", "matchFields"):
        for requirement in candidate.get(where, []):
            groups.setdefault((where, requirement["key"]), []).append(requirement)
    if not groups:
        return False
    return all(
        any(
            all(_requirement_holds(r, value) for r in requirements)
            for value in _candidates(requirements, where == "matchExpressions")
        )
        for (where, _), requirements in groups.items()
    )


_VALUES = st.sampled_from(["1", "2", "3", "4", "x", "y"])
_EXPRESSION = st.one_of(
    st.builds(
        lambda k, op, vs: req(k, op, *vs),
        st.sampled_from("kl"),
        st.sampled_from(["In", "NotIn"]),
        st.lists(_VALUES, min_size=1, max_size=3),
    ),
    st.builds(req, st.sampled_from("kl"), st.sampled_from(["Exists", "DoesNotExist"])),
    st.builds(
        req,
        st.sampled_from("kl"),
        st.sampled_from(["Gt", "Lt"]),
        st.sampled_from(["0", "1", "2", "3", "4"]),
    ),
)
_FIELD = st.builds(
    lambda op, v: req("metadata.name", op, v), st.sampled_from(["In", "NotIn"]), st.sampled_from(["n1", "n2"])
)
_TERMS = st.builds(
    lambda expressions, fields: term(*expressions, fields=tuple(fields)),
    st.lists(_EXPRESSION, max_size=5),
    st.lists(_FIELD, max_size=2),
)


@given(_TERMS)
def test_contradiction_detection_never_drops_a_satisfiable_term(candidate: dict[str, Any]) -> None:
    if contradiction(candidate) is not None:
        assert not _satisfiable(candidate)
    # And over this vocabulary it is exact: every term it keeps has a node.
    assert (contradiction(candidate) is None) == _satisfiable(candidate)


@given(_TERMS, st.lists(_EXPRESSION, min_size=1, max_size=3))
def test_a_contradiction_stays_one_when_requirements_are_added(candidate: dict[str, Any], more: list[Any]) -> None:
    """So a policy in conflict stays in conflict whatever is merged before it (the empty term, which matches no
    node only for want of requirements, is the exception)."""
    if candidate and contradiction(candidate) is not None:
        bigger = {**candidate, "matchExpressions": [*candidate.get("matchExpressions", []), *more]}
        assert contradiction(bigger) is not None


@given(st.lists(_TERMS, max_size=6))
def test_reduction_keeps_the_meaning_and_leaves_an_antichain(terms: list[dict[str, Any]]) -> None:
    kept, _ = reduce_terms(terms)
    assert all(contradiction(t) is None for t in kept)
    assert all(t in terms for t in kept)
    # Every satisfiable term dropped is implied by (a superset or a repeat of) one that is kept.
    keys = [term_key(t) for t in kept]
    for candidate in terms:
        if contradiction(candidate) is None:
            assert any(key <= term_key(candidate) for key in keys)
    assert len(set(keys)) == len(keys)
    assert not any(a < b for a in keys for b in keys)
