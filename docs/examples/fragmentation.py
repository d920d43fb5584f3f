# %% [markdown]
# # Fragmentation after a kernel-build-like churn, two designs side by side
#
# A notebook in the "percent" format: each `# %%` cell runs in order (paste
# them into Jupyter, or run the file: `python docs/examples/fragmentation.py`;
# `make test-py` runs it through python/tests/test_examples.py). Everything runs
# in this process through `pagelab.Machine` (libpagelab.so).

# %%
import time

import pagelab

print("libpagelab", pagelab.version())
SETTINGS = dict(mem="256M", dma32="64M")
DESIGNS = ["v6.18", "v6.18+mt_counts", "v6.18+pcp_owner"]

# %% [markdown]
# Build one machine per design, fragment each with the same seed, and keep
# the survivors allocated so the reports show the fragmented state.

# %%
machines = {d: pagelab.Machine(**SETTINGS, design=d) for d in DESIGNS}
free_at_boot = {d: m.nr_free_pages() for d, m in machines.items()}
churn = {d: m.run_workload("churn", rounds=20000, seed=42, keep=True) for d, m in machines.items()}
for d, res in churn.items():
    print(f"{d:<18} live blocks {res['live_blocks']:>6}  free blocks {res['free_blocks']:>6}")

# %% [markdown]
# /proc/buddyinfo of the baseline: free blocks per order, per zone.

# %%
print(machines["v6.18"].buddyinfo())

# %% [markdown]
# /proc/vmstat in the kernel's names: free pages, pages allocated per zone, pages
# freed (boot's included, as the kernel counts them); only the items pagelab keeps.

# %%
vmstat = dict(line.split() for line in machines["v6.18"].vmstat().splitlines())
print(machines["v6.18"].vmstat(), end="")
assert int(vmstat["nr_free_pages"]) <= free_at_boot["v6.18"]

# %% [markdown]
# Reading /proc/pagetypeinfo: the baseline walks every free list under
# zone->lock, seed 002 (mt_counts) reads counters. Same text, different cost
# (zone->lock acquisitions counted by the library; times are indicative only).

# %%
reports = {}
for d, m in machines.items():
    t0 = time.perf_counter()
    reports[d] = m.pagetypeinfo()
    print(f"{d:<18} {1e6 * (time.perf_counter() - t0):9.1f} us")
assert reports["v6.18"] == reports["v6.18+mt_counts"]   # the same placement, the same report

# %% [markdown]
# Free blocks per order in the Normal zone, as a bar chart (saved as PNG when
# matplotlib is there; a Jupyter cell would show it inline).

# %%
def normal_zone_orders(buddyinfo: str) -> list[int]:
    line = next(x for x in buddyinfo.splitlines() if "Normal" in x)
    return [int(v) for v in line.split()[4:]]


orders = {d: normal_zone_orders(m.buddyinfo()) for d, m in machines.items()}
for d, counts in orders.items():
    print(f"{d:<18}", " ".join(f"{c:5d}" for c in counts))
try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 3))
    width = 0.8 / len(orders)
    for i, (d, counts) in enumerate(orders.items()):
        ax.bar([o + i * width for o in range(len(counts))], counts, width, label=d)
    ax.set_xlabel("order")
    ax.set_ylabel("free blocks (Normal)")
    ax.legend()
    fig.tight_layout()
    out = __import__("pathlib").Path("out")
    out.mkdir(exist_ok=True)
    fig.savefig(out / "example-fragmentation.png")
    print("saved out/example-fragmentation.png")
except ImportError:
    pass

# %% [markdown]
# Counters, the checker, and cleaning up: every page comes back.

# %%
for d, m in machines.items():
    c = m.counters()
    m.release_workloads()
    m.drain_all_pages()
    assert m.check() == 0
    assert m.nr_free_pages() == free_at_boot[d]
    print(f"{d:<18} PGALLOC {c['PGALLOC']:>8}  PGFREE {c['PGFREE']:>8}  free pages now {m.nr_free_pages()}")
    m.close()
