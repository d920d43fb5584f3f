"""stats.py against examples worked out by hand (t quantiles from tables)."""
import math

import pytest

from pagelab import stats

BASE = [10.0, 12.0, 14.0]   # mean 12, s = 2
NEW = [20.0, 21.0, 22.0]    # mean 21, s = 1
T_975_2 = 4.302653          # Student's t, 97.5% quantile, 2 degrees of freedom


def test_stddev_and_coeffvar():
    s = stats.summarize(BASE)
    assert s.n == 3 and s.min == 10 and s.max == 14 and s.amean == 12
    assert s.stddev == pytest.approx(2.0)               # sqrt(((-2)^2 + 0 + 2^2) / 2)
    assert s.coeffvar == pytest.approx(200.0 / 12.0)    # 16.667 %


def test_t_confidence_interval():
    # half-width = t * s / sqrt(n)
    assert stats.ci_half_width(BASE) == pytest.approx(T_975_2 * 2 / math.sqrt(3), rel=1e-6)  # 4.9683
    assert stats.ci_half_width(NEW) == pytest.approx(T_975_2 * 1 / math.sqrt(3), rel=1e-6)   # 2.4842
    lo, hi = stats.confidence_interval(BASE)
    assert lo == pytest.approx(7.0317, abs=1e-3) and hi == pytest.approx(16.9683, abs=1e-3)
    # n = 10, s = 1: t(0.975, 9) = 2.262157
    ten = [0, 0, 0, 0, 0, 1, 1, 1, 1, 1]
    assert stats.ci_half_width(ten) == pytest.approx(2.262157 * stats.stddev(ten) / math.sqrt(10), rel=1e-6)


def test_one_sample_is_never_significant():
    assert stats.ci_half_width([5.0]) == math.inf
    assert stats.verdict([5.0], [500.0]) == ""


def test_verdict_direction_from_the_registry():
    # [7.03, 16.97] vs [18.52, 23.48]: disjoint, new is higher
    assert stats.verdict(BASE, NEW, stats.LOWER) == "(R)"
    assert stats.verdict(BASE, NEW, stats.HIGHER) == "(I)"
    assert stats.verdict(NEW, BASE, stats.LOWER) == "(I)"
    # a neutral figure is shown, never marked, however far it moves
    assert stats.verdict(BASE, NEW, stats.NEUTRAL) == ""
    cell = stats.judge(BASE, NEW, stats.NEUTRAL, stats.policy_for("wall"))
    assert cell.mark == "" and cell.why == "neutral" and cell.text().endswith("(not judged)")
    # nothing is guessed from a unit any more
    assert not hasattr(stats, "better_for") and not hasattr(stats, "UNIT_BETTER")


def test_overlapping_intervals_are_not_significant():
    # [10,12,14] vs [14,15,16]: means 12 and 15, CIs [7.03,16.97] and [12.52,17.48] overlap
    assert stats.verdict(BASE, [14.0, 15.0, 16.0]) == ""
    # Constant samples have zero-width intervals: any difference is significant.
    assert stats.verdict([3.0, 3.0], [4.0, 4.0]) == "(R)"
    assert stats.verdict([3.0, 3.0], [3.0, 3.0]) == ""


def test_cidiff_agrees_with_overlap():
    hb, hn = stats.ci_half_width(BASE), stats.ci_half_width(NEW)
    c = stats.cidiff(21.0, hn, 12.0, hb)
    assert c == pytest.approx(9.0 / (T_975_2 * 3 / math.sqrt(3)), rel=1e-6)   # 1.2077
    assert abs(c) > 1
    assert stats.cidiff(5.0, 0.0, 5.0, 0.0) == 0.0


def test_percentages():
    # mmtests: pndiff for lower-is-better, positive = better
    assert stats.pndiff(8762.0, 8539.0) == pytest.approx(-2.61, abs=0.005)   # seed 002, Min alloc-odr4-1
    assert stats.pndiff(329.0, 339.0) == pytest.approx(2.95, abs=0.005)      # seed 002, Min free-odr4-256
    assert stats.pdiff(110.0, 100.0) == pytest.approx(10.0)
    assert stats.pdiff(1.0, 0.0) != stats.pdiff(1.0, 0.0)                    # NaN, not a number
    # Fastpath: >0 is faster.  Time 100 -> 50 is +100%, 100 -> 200 is -50%.
    assert stats.fastpath_change(100.0, 50.0, stats.LOWER) == pytest.approx(100.0)
    assert stats.fastpath_change(100.0, 200.0, stats.LOWER) == pytest.approx(-50.0)
    assert stats.fastpath_change(100.0, 150.0, stats.HIGHER) == pytest.approx(50.0)
    # Seed 002's first row: 700.9 us -> 268.6 us
    assert stats.fastpath_change(700.9, 268.6) == pytest.approx(160.95, abs=0.01)


def test_bamean_and_hmean():
    vals = list(range(1, 21))                               # 1..20, k = 19
    assert stats.bamean(vals, 95, stats.LOWER) == pytest.approx(10.0)    # mean(1..19)
    assert stats.bamean(vals, 95, stats.HIGHER) == pytest.approx(11.0)   # mean(2..20)
    assert stats.bamean([4.0], 95) == 4.0                   # k = 0: all samples
    assert stats.hmean(NEW) == pytest.approx(3 / (1 / 20 + 1 / 21 + 1 / 22))   # 20.968
    assert math.isnan(stats.hmean([1.0, 0.0]))
    s = stats.summarize(NEW, stats.HIGHER)
    assert s.mean == s.hmean and stats.summarize(NEW).mean == 21.0
