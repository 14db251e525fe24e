"""The one majority vote shared by `denpex replicas` (checkpoints and fingerprints) and the
probe's replica check during training."""

from __future__ import annotations

from denpex.majority import vote


def test_a_strict_majority_is_the_reference() -> None:
    result = vote({0: "a", 1: "b", 2: "b", 3: "b"})
    assert result.reference == [1, 2, 3] and result.strict and not result.tied
    assert result.odd == [0]


def test_an_even_split_goes_to_the_side_of_the_lowest_rank() -> None:
    result = vote({3: "a", 1: "b", 0: "a", 2: "b"})
    assert result.reference == [0, 3] and result.tied and not result.strict
    assert result.odd == [1, 2]


def test_a_lone_lowest_rank_is_not_the_reference_against_larger_sides() -> None:
    # Before, the fingerprint path compared a tie with the lowest holder's value, even when
    # that rank stood alone: the odd one out became everybody's reference.
    result = vote({0: "x", 1: "a", 2: "a", 3: "b", 4: "b"})
    assert result.reference == [1, 2] and result.tied
    assert result.odd == [0, 3, 4]


def test_without_a_strict_majority_the_side_that_moved_least_is_the_reference() -> None:
    moves = {0: 5.0, 1: 1.0}
    result = vote({0: "a", 1: "b"}, moved=lambda side: sum(moves[v] for v in side))
    assert result.reference == [1] and result.odd == [0]


def test_movement_does_not_overrule_a_strict_majority() -> None:
    result = vote({0: "a", 1: "a", 2: "b"}, moved=lambda side: 0.0 if side == [2] else 9.0)
    assert result.reference == [0, 1]


def test_agreement_is_one_side() -> None:
    result = vote({0: 7, 1: 7})
    assert result.sides == [[0, 1]] and result.odd == []
