"""Statistics for comparing designs, the way the kernel community judges them.

Two verdicts, both on repeated samples of one test under two designs:

* Arm Fastpath's (R)/(I): the 95% confidence intervals of the two means
  (Student's t, n-1 degrees of freedom) do not overlap.  (R) is a
  regression, (I) an improvement, relative to the baseline and in the
  direction the figure's metric declares better (metrics.py: lower for
  times and lock trips, higher for rates and free blocks; a neutral figure
  is never marked).
  Fastpath prints the change as a percentage where >0 is faster and <0 is
  slower: base/new - 1 for a time, new/base - 1 for a rate.

* mmtests' compare layout: Min, Amean (Hmean when higher is better),
  Stddev (sample, n-1), CoeffVar (stddev*100/mean), Max, BAmean-95 (the mean
  of the best 95% of the sorted samples), each with pndiff (lower is better:
  100 - new*100/base) or pdiff (higher is better: new*100/base - 100) against
  the baseline; Stddev and CoeffVar always use pndiff.  The comparison row
  (Amean/Hmean) is marked significant, with asterisks instead of
  parentheses, when |cidiff| > 1, where cidiff = (new - base) / (sum of the
  two CI half-widths).  We use the same t-based half-widths as Fastpath, so
  the two verdicts agree: intervals that do not overlap are exactly
  |cidiff| > 1.

Distributions come from scipy; nothing here hand-rolls a quantile.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
from scipy import stats as _sps

from . import metrics

# Which way is better comes from the metric registry (metrics.py, declared
# in C): a figure's direction is its metric's, never guessed from its unit.
# NEUTRAL figures are shown with their change and never marked.
LOWER, HIGHER, NEUTRAL = metrics.LOWER, metrics.HIGHER, metrics.NEUTRAL

CONFIDENCE = 0.95


def _arr(values: Sequence[float]) -> np.ndarray:
    a = np.asarray(values, dtype=float)
    if a.ndim != 1 or a.size == 0:
        raise ValueError("need at least one sample")
    return a


def stddev(values: Sequence[float]) -> float:
    """Sample standard deviation (n-1); NaN for a single sample."""
    a = _arr(values)
    return float(np.std(a, ddof=1)) if a.size > 1 else math.nan


def ci_half_width(values: Sequence[float], confidence: float = CONFIDENCE) -> float:
    """Half-width of the t confidence interval of the mean.

    t_{(1+c)/2, n-1} * s / sqrt(n).  Infinite for one sample: a single
    measurement cannot bound its own mean, so nothing is significant.
    """
    a = _arr(values)
    if a.size < 2:
        return math.inf
    q = _sps.t.ppf((1.0 + confidence) / 2.0, a.size - 1)
    return float(q * np.std(a, ddof=1) / math.sqrt(a.size))


def confidence_interval(values: Sequence[float], confidence: float = CONFIDENCE) -> tuple[float, float]:
    m = float(np.mean(_arr(values)))
    h = ci_half_width(values, confidence)
    return m - h, m + h


def hmean(values: Sequence[float]) -> float:
    """Harmonic mean; NaN when a sample is not positive (as mmtests refuses)."""
    a = _arr(values)
    if np.any(a <= 0):
        return math.nan
    return float(_sps.hmean(a))


def bamean(values: Sequence[float], percent: float = 95, better: str = LOWER) -> float:
    """Mean of the best @percent% of the samples (mmtests' BAmean-N).

    The best are the lowest when lower is better, else the highest; k =
    floor(n * percent / 100) samples, all of them when k is 0.
    """
    a = np.sort(_arr(values))
    k = int(a.size * percent // 100)
    if k == 0:
        return float(np.mean(a))
    best = a[:k] if better == LOWER else a[a.size - k:]
    return float(np.mean(best))


def pdiff(new: float, base: float) -> float:
    """mmtests' pdiff, higher is better: new*100/base - 100."""
    if new == base:
        return 0.0
    if base == 0:
        return math.nan
    return new * 100.0 / base - 100.0


def pndiff(new: float, base: float) -> float:
    """mmtests' pndiff, lower is better: 100 - new*100/base (positive = better)."""
    if new == base:
        return 0.0
    if base == 0:
        return math.nan
    return 100.0 - new * 100.0 / base


def cidiff(new: float, new_ci: float, base: float, base_ci: float) -> float:
    """mmtests' cidiff: the difference of means over the sum of CI half-widths."""
    diff = new - base
    total = new_ci + base_ci
    if total == 0:
        return 0.0 if diff == 0 else math.copysign(math.inf, diff)
    return diff / total


def fastpath_change(base_mean: float, new_mean: float, better: str = LOWER) -> float:
    """Fastpath's percentage: >0 is faster/better, <0 slower/worse; for a
    NEUTRAL figure the plain change, >0 meaning it went up."""
    if base_mean == new_mean:
        return 0.0
    if better == LOWER:
        return (base_mean / new_mean - 1.0) * 100.0 if new_mean else math.inf
    return (new_mean / base_mean - 1.0) * 100.0 if base_mean else math.inf


# Above this a percentage stops reading well ("3140009.08%"): say "x times".
RATIO_ABOVE_PCT = 1000.0


def fmt_change(change: float, fmt: str = "{:.2f}%") -> str:
    """A fastpath_change() for people: "12.34%" (@fmt), a ratio "43.3x" once
    the new is more than 11 times better, "n/a" when undefined (never nan%
    or inf%)."""
    if not math.isfinite(change):
        return "n/a"
    if change > RATIO_ABOVE_PCT:
        ratio = 1.0 + change / 100.0
        return f"{ratio:.0f}x" if ratio >= 100 else f"{ratio:.1f}x"
    return fmt.format(change)


def verdict(base: Sequence[float], new: Sequence[float], better: str = LOWER,
            confidence: float = CONFIDENCE) -> str:
    """'(R)', '(I)' or '' for @new against @base (Fastpath's rule).

    Significant when the two t confidence intervals do not overlap
    (touching intervals overlap).  Then the direction of the means and
    @better decide between regression and improvement.
    """
    if better == NEUTRAL:
        return ""
    blo, bhi = confidence_interval(base, confidence)
    nlo, nhi = confidence_interval(new, confidence)
    if not (nlo > bhi or nhi < blo):
        return ""
    new_is_lower = float(np.mean(_arr(new))) < float(np.mean(_arr(base)))
    return "(I)" if new_is_lower == (better == LOWER) else "(R)"


@dataclass
class Summary:
    """Everything the tables print for one (test, design) sample set."""
    n: int
    min: float
    max: float
    amean: float
    hmean: float
    stddev: float
    coeffvar: float
    bamean95: float
    ci_half: float
    better: str

    @property
    def mean(self) -> float:
        """The comparison statistic: Hmean when higher is better, else Amean."""
        return self.hmean if self.better == HIGHER else self.amean


def summarize(values: Sequence[float], better: str = LOWER) -> Summary:
    a = _arr(values)
    m = float(np.mean(a))
    sd = stddev(a)
    return Summary(
        n=int(a.size), min=float(a.min()), max=float(a.max()), amean=m,
        hmean=hmean(a), stddev=sd,
        coeffvar=(0.0 if (math.isnan(sd) or m == 0) else sd * 100.0 / m),
        bamean95=bamean(a, 95, better), ci_half=ci_half_width(a), better=better)


# ------------------------------------------------------------ judging cells
#
# The protocol behind every (R)/(I) a seed table prints (README, "Verdicts
# that reproduce").  A cell is one row of a seed table under one design,
# judged against the baseline's samples of the same row:
#
# * at least Policy.min_runs samples on each side, else no mark ("few");
# * the cell is noisy when either side's coefficient of variation is above
#   Policy.noisy_cov percent: it is shown as noisy and never marked;
# * otherwise Fastpath's rule (the 95% t intervals do not overlap), and in
#   a deterministic mode (instruction counts, virtual time: the same run
#   gives the same figure) also |change| >= Policy.min_change percent, since
#   there a difference of 0.01% is exact but not one Fastpath could see;
# * a smoke run (--quick) never marks.
#
# Repetitions stop (stop_reason) once every cell's CI half-width is within
# Policy.ci_target of its mean and min_runs are in, or at max_runs.

@dataclass(frozen=True)
class Policy:
    """How many samples a cell gets and when it may be marked."""
    mode: str                # "wall", "instr" or "vtime"
    min_runs: int            # no (R)/(I) with fewer samples on a side
    max_runs: int            # the cap of the adaptive repetitions
    ci_target: float         # stop when every CI half-width <= ci_target * mean
    noisy_cov: float         # CoV (%) above which a cell is noisy: shown, never marked
    warn_cov: float          # CoV (%) above which the table warns
    min_change: float = 0.0  # |change| (%) a deterministic mode needs for a mark
    quick: bool = False      # a smoke run: no marks at all

    @property
    def deterministic(self) -> bool:
        return self.mode != "wall"


MEASURE_MODES = ("wall", "instr", "vtime")


def policy_for(mode: str, quick: bool = False) -> Policy:
    """The protocol of @mode ("wall", "instr", "vtime"); @quick: a smoke run."""
    if mode not in MEASURE_MODES:
        raise ValueError(f"unknown mode '{mode}' ({', '.join(MEASURE_MODES)})")
    if mode == "wall":
        p = Policy("wall", min_runs=5, max_runs=10, ci_target=0.02, noisy_cov=5.0,
                   warn_cov=3.0)
    else:
        # Deterministic: the second run only confirms the first.
        p = Policy(mode, min_runs=2, max_runs=3, ci_target=0.005, noisy_cov=1.0,
                   warn_cov=0.5, min_change=1.0)
    if quick:
        p = Policy(p.mode, min_runs=p.min_runs, max_runs=p.min_runs, ci_target=p.ci_target,
                   noisy_cov=p.noisy_cov, warn_cov=p.warn_cov, min_change=p.min_change,
                   quick=True)
    return p


def cov(values: Sequence[float]) -> float:
    """Coefficient of variation in percent; NaN below two samples."""
    a = _arr(values)
    if a.size < 2:
        return math.nan
    m = float(np.mean(a))
    sd = float(np.std(a, ddof=1))
    if m == 0:
        return 0.0 if sd == 0 else math.inf
    return abs(sd * 100.0 / m)


def converged(values: Sequence[float], policy: Policy) -> bool:
    """True when @values' 95% CI half-width is within policy.ci_target of the mean."""
    a = _arr(values)
    if a.size < max(2, policy.min_runs):
        return False
    m = abs(float(np.mean(a)))
    h = ci_half_width(a)
    return h == 0 or (m > 0 and h <= policy.ci_target * m)


def stop_reason(cells: dict, policy: Policy, runs: int) -> str | None:
    """Why the repetitions stop after @runs rounds, or None to go on.

    @cells: cell key -> samples so far.  "converged" when every cell meets
    the CI target (after min_runs), "cap" at max_runs.
    """
    if runs < policy.min_runs:
        return None
    if all(converged(v, policy) for v in cells.values()):
        return "converged"
    if runs >= policy.max_runs:
        return "cap"
    return None


@dataclass
class Cell:
    """One judged cell: the change (>0 better), its mark, and why it has none."""
    change: float
    mark: str            # "(R)", "(I)" or ""
    noisy: bool
    n: int               # the smaller side's sample count
    cov: float           # the larger side's CoV (%)
    why: str = ""        # "", "few", "noisy", "smoke", "small", "neutral"

    def text(self, fmt: str = "{:.2f}%") -> str:
        if fmt.endswith("%"):
            body = fmt_change(self.change, fmt)
        else:
            body = fmt.format(self.change) if math.isfinite(self.change) else "n/a"
        if self.mark:
            return f"{self.mark} {body}"
        if self.why == "neutral":
            return f"{body} (not judged)"
        if self.noisy:
            return f"{body} (noisy)"
        return body


def judge(base: Sequence[float], new: Sequence[float], better: str, policy: Policy) -> Cell:
    """Judge @new against @base under @policy (the rules at the top of this part)."""
    bm, nm = float(np.mean(_arr(base))), float(np.mean(_arr(new)))
    change = fastpath_change(bm, nm, better)
    n = min(len(base), len(new))
    cv = max((c for c in (cov(base), cov(new)) if not math.isnan(c)), default=math.nan)
    noisy = not math.isnan(cv) and cv > policy.noisy_cov
    if better == NEUTRAL:
        return Cell(change, "", noisy, n, cv, "neutral")
    if policy.quick:
        return Cell(change, "", noisy, n, cv, "smoke")
    if n < policy.min_runs:
        return Cell(change, "", noisy, n, cv, "few")
    if noisy:
        return Cell(change, "", True, n, cv, "noisy")
    mark = verdict(base, new, better)
    if mark and policy.deterministic and abs(change) < policy.min_change:
        return Cell(change, "", False, n, cv, "small")
    return Cell(change, mark, False, n, cv, "")
