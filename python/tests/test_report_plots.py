"""The report's plots read right (issue 17 §6): whiskers never below zero,
none for a single run (which is labelled n=1), panels name their workload,
and the vCPU plot shows seed 003's sweep with one legend entry per design."""
import matplotlib

matplotlib.use("Agg")

from pagelab import report  # noqa: E402
from pagelab.runner import Measurement  # noqa: E402


def _bar_whiskers(fig):
    """(bottom, top) of every error bar line in @fig's first axes."""
    ax = fig.axes[0]
    out = []
    for coll in ax.collections:
        for seg in coll.get_segments():
            out.append((min(seg[0][1], seg[1][1]), max(seg[0][1], seg[1][1])))
    return ax, out


def test_whiskers_cut_at_zero_and_none_for_one_run():
    ms = [Measurement("s", "t", "a", i, v, "ns") for i, v in enumerate([1.0, 50.0, 0.5])]
    ms += [Measurement("s", "t", "b", 0, 10.0, "ns")]
    fig = report.bars_figure(ms, "x")
    ax, whiskers = _bar_whiskers(fig)
    assert whiskers and all(lo >= 0 for lo, _ in whiskers)
    assert len(whiskers) == 1                          # design b (n=1) has none
    assert any(t.get_text() == "n=1" for t in ax.texts)


def test_panels_name_the_workload():
    ms = [Measurement(s, "throughput-v32", "v6.18", r, 10.0 + r, "Mops/s")
          for s in ("kbuild", "exit_avalanche") for r in range(2)]
    fig = report.bars_figure(ms, "x")
    titles = {ax.get_title() for ax in fig.axes if ax.get_title()}
    assert titles == {"kbuild: throughput-v32", "exit_avalanche: throughput-v32"}
