"""pagelab compare never pools runs from different labels, commits or
machines; --label lands in the results; pagelab ab refuses bad revisions."""
import json

from pagelab import runs
from pagelab.cli import main
from pagelab.runner import Measurement

MACH = {"cpu": "Xeon", "cores": 2, "memory_mib": 8000, "kernel": "Linux 6.1"}


def doc(label, commit, values, machine=MACH, design="v6.18", path="f.json"):
    ms = [Measurement("s", "t", design, i, v, "ns") for i, v in enumerate(values)]
    return {"label": label, "machine": dict(machine, commit=commit), "measurements": ms,
            "path": path}


def test_same_run_is_pooled():
    ms, notes = runs.group_runs([doc("x", "aaa", [1, 2]), doc("x", "aaa", [3])])
    assert {m.design for m in ms} == {"v6.18"} and len(ms) == 3
    assert "pooled 2 files of one run" in notes[0]


def test_commits_apart():
    ms, notes = runs.group_runs([doc(None, "a" * 40, [1, 2]), doc(None, "b" * 40, [3, 4])])
    assert {m.design for m in ms} == {"v6.18@" + "a" * 12, "v6.18@" + "b" * 12}
    assert "differ in commit" in notes[0] and "not pooled" in notes[0]


def test_labels_name_the_columns_and_machines_are_said():
    other = dict(MACH, cpu="EPYC")
    ms, notes = runs.group_runs([doc("base", "a" * 40, [1]), doc("patch", "b" * 40, [2], other)])
    assert {m.design for m in ms} == {"v6.18@base", "v6.18@patch"}
    text = "\n".join(notes)
    assert "label and commit and machine" in text and "EPYC" in text


def test_compare_cli_says_so(tmp_path, capsys):
    for name, commit in (("a", "1" * 40), ("b", "2" * 40)):
        d = doc(None, commit, [10, 11, 12])
        d["measurements"] = [m.to_dict() for m in d["measurements"]]
        d["format"] = "pagelab-results/1"
        (tmp_path / f"{name}.json").write_text(json.dumps(d))
    assert main(["compare", str(tmp_path / "a.json"), str(tmp_path / "b.json"),
                 "--baseline", "v6.18"]) == 0
    out = capsys.readouterr().out
    assert "not pooled" in out and "v6.18@111111111111" in out and "v6.18@222222222222" in out
    assert "(n=6)" not in out


def test_bench_label_is_saved(tmp_path):
    out = tmp_path / "r.json"
    assert main(["bench", "buddy_alloc_free", "mem=64M", "dma32=16M", "nr=1000", "reps=1",
                 "--label", "my-patch", "-o", str(out)]) == 0
    assert json.loads(out.read_text())["label"] == "my-patch"


def test_ab_bad_revision_is_one_line(capsys, tmp_path):
    assert main(["ab", "no-such-rev-xyz", "HEAD", "buddy_alloc_free", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no-such-rev-xyz" in err[0] and "not a commit" in err[0]
