"""The report's plots read right: whiskers never below zero,
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


def test_vcpu_plot_is_seed_003s_sweep():
    ms = [Measurement(s, f"zone-lock-per-Mop-v{v}", d, r, float(v * (2 if d == "v6.18" else 1)),
                      "count", {"vcpus": "8,32,128"})
          for s in ("alloc_many_free_few", "kbuild") for d in ("v6.18", "pcp-owner")
          for v in (8, 32, 128) for r in range(2)]
    # seed 004's per-worker rows vary vcpus too: they must stay out
    ms += [Measurement("test_vmalloc", f"fix_size_alloc_test, worker {w}", "v6.18", 0, 5.0, "usec",
                       {"vcpus": str(v)}, {"zone_lock_acquisitions": 7})
           for w in range(16) for v in (8, 64)]
    fig = report.vcpu_figure(ms)
    assert [ax.get_title() for ax in fig.axes] == ["alloc_many_free_few", "kbuild"]
    for ax in fig.axes:
        labels = [t.get_text() for t in ax.get_legend().get_texts()]
        assert labels == ["v6.18", "pcp-owner"]
        assert list(ax.lines[0].get_xdata()) == [8, 32, 128]
        assert list(ax.lines[0].get_ydata()) == [16.0, 64.0, 256.0]


def test_vcpu_plot_needs_a_sweep():
    ms = [Measurement("kbuild", "zone-lock-per-Mop-v32", "v6.18", 0, 5.0, "count")]
    assert report.vcpu_figure(ms) is None


def test_changes_read_as_ratios_never_nan_or_inf():
    from pagelab import stats, tables
    assert stats.fmt_change(12.345) == "12.35%"
    assert stats.fmt_change(-40.0) == "-40.00%"
    assert stats.fmt_change(4682061.24) == "46822x"
    assert stats.fmt_change(4034.53) == "41.3x"
    for bad in (float("nan"), float("inf"), float("-inf")):
        assert stats.fmt_change(bad) == "n/a"
    assert stats.Cell(float("inf"), "(I)", False, 5, 1.0).text() == "(I) n/a"
    text = tables._mm_pct(float("nan"), False)
    assert "nan" not in text and "%" not in text and "n/a" in text


def test_axes_start_at_zero_without_offset_text():
    ms = [Measurement("s", "zero", d, r, 0.0, "index") for d in ("a", "b") for r in range(3)]
    ms += [Measurement("s", "big", d, r, 1.2e7 + r, "usec") for d in ("a", "b") for r in range(3)]
    fig = report.bars_figure(ms, "x")
    for ax in fig.axes[:2]:
        assert ax.get_ylim()[0] == 0
    fig.canvas.draw()
    big = next(ax for ax in fig.axes if ax.get_title() == "big")
    assert big.yaxis.get_offset_text().get_text() == ""
    assert any(t.get_text().endswith("M") for t in big.get_yticklabels())


def test_all_zero_panels_are_left_out_and_named():
    ms = [Measurement("kbuild", t, d, r, (0.0 if t == "merges-pcp-v32" else 3.0 + r), "count")
          for t in ("zone-lock-v32", "merges-pcp-v32") for d in ("v6.18", "pcp-owner")
          for r in range(2)]
    fig = report.bars_figure(ms, "seed 003")
    titles = [ax.get_title() for ax in fig.axes if ax.get_title()]
    assert titles == ["zone-lock-v32"]
    assert fig.pagelab_notes == ["kbuild: merges-pcp-v32: every value is 0 under every design "
                                 "(panel left out)"]


def test_figure_title_is_above_every_panel_title():
    ms = [Measurement("kbuild", f"t{i}", d, r, 1.0 + i + r, "count")
          for i in range(30) for d in ("v6.18", "pcp-owner") for r in range(2)]   # 10 rows
    fig = report.bars_figure(ms, "seed 003: mean per design, 95% CI whiskers")
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    sup = fig._suptitle.get_window_extent(r)
    for ax in fig.axes:
        box = ax.title.get_window_extent(r)
        assert box.y1 <= sup.y0 or box.x1 <= sup.x0 or box.x0 >= sup.x1, ax.get_title()
