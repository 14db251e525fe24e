"""Mann-Kendall, Sen's slope and growth shape against values worked out by hand."""

from __future__ import annotations

import math

import pytest

from denpex.drift.stats import growth_shape, mann_kendall, sen_slope


def test_fully_monotonic_ten_points() -> None:
    mk = mann_kendall([float(i) for i in range(10)])
    # S = 45 pairs, Var(S) = 10*9*25/18 = 125, Z = (45-1)/sqrt(125)
    assert mk.s == 45
    assert mk.var_s == pytest.approx(125.0)
    assert mk.z == pytest.approx(44 / math.sqrt(125))
    assert mk.tau == pytest.approx(1.0)
    assert mk.p_increasing == pytest.approx(4.15e-5, rel=0.01)
    assert mk.p_two_sided == pytest.approx(2 * mk.p_increasing)


def test_decreasing_series_is_not_an_upward_trend() -> None:
    mk = mann_kendall([5.0, 4.0, 3.0, 2.0, 1.0])
    assert mk.s == -10
    assert mk.tau == pytest.approx(-1.0)
    # Z = (-10+1)/sqrt(5*4*15/18) = -2.205 -> one-sided upward p = 0.986
    assert mk.p_increasing == pytest.approx(0.9863, abs=1e-3)


def test_ties_shrink_the_variance() -> None:
    # [1, 2, 2, 3, 3, 3, 4]: S counts 17 concordant pairs, none discordant (4 ties give 0).
    mk = mann_kendall([1, 2, 2, 3, 3, 3, 4])
    assert mk.s == 17
    # n term 7*6*19 = 798; ties: t=2 -> 2*1*9 = 18, t=3 -> 3*2*11 = 66; (798-84)/18
    assert mk.var_s == pytest.approx(714 / 18)
    # tau-b: 21 pairs, 4 tied pairs -> 17 / sqrt(21 * 17)
    assert mk.tau == pytest.approx(17 / math.sqrt(21 * 17))


def test_constant_series_carries_no_trend() -> None:
    mk = mann_kendall([3.0] * 6)
    assert (mk.s, mk.tau, mk.p_increasing) == (0, 0.0, 1.0)
    assert mann_kendall([1.0]).p_increasing == 1.0


def test_sen_slope_ignores_an_outlier() -> None:
    assert sen_slope([0, 1, 2, 3, 4], [0, 2, 4, 6, 8]) == pytest.approx(2.0)
    # 10 pairwise slopes: the 6 among the first four points are 2, so the outlier's 4 do
    # not move the median.
    assert sen_slope([0, 1, 2, 3, 4], [0, 2, 4, 6, 500]) == pytest.approx(2.0)
    assert sen_slope([10, 20, 30], [1.0, 1.5, 2.0]) == pytest.approx(0.05)
    with pytest.raises(ValueError):
        sen_slope([1, 2], [1.0])


@pytest.mark.parametrize(
    ("values", "shape"),
    [
        ([0, 1, 2, 3, 4, 5, 6, 7], "linear"),
        ([0, 1, 2, 3, 5, 8, 13, 21], "accelerating"),
        ([0, 5, 8, 9, 9.5, 9.7, 9.8, 9.9], "saturating"),
        ([1, 2, 3], "linear"),
    ],
)
def test_growth_shape(values: list[float], shape: str) -> None:
    assert growth_shape(list(range(len(values))), values) == shape
