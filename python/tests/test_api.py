"""The in-process API (pagelab.Machine over libpagelab.so): pages, bulk,
vmalloc, workloads, counters, reports; bad input raises and changes nothing."""
import threading

import pytest

pagelab = pytest.importorskip("pagelab")
try:
    pagelab.version()
except ImportError as e:        # no libpagelab.so: the API cannot be tested here
    pytest.skip(str(e), allow_module_level=True)

SMALL = {"mem": "64M", "dma32": "16M"}


@pytest.fixture
def m():
    with pagelab.Machine(**SMALL) as mach:
        yield mach
        assert mach.check() == 0


def test_version():
    assert pagelab.version().startswith("0.10.0 (git ")


def test_alloc_free_and_buddyinfo(m):
    free0 = m.nr_free_pages()
    pages = [m.alloc_pages(order=o) for o in (0, 1, 2, 3, 9)]
    assert len({p.pfn for p in pages}) == 5
    assert all(p.pfn % (1 << p.order) == 0 for p in pages)
    assert m.nr_free_pages() <= free0 - (1 + 2 + 4 + 8 + 512)
    info = m.buddyinfo()
    assert info.startswith("Node 0, zone    DMA32") and info.endswith("\n")
    assert info.count("\n") == 2
    for p in pages:
        m.free_pages(p)
    m.drain_all_pages()
    assert m.nr_free_pages() == free0
    c = m.counters()
    assert c["PGALLOC"] >= 5 and c["nr_free_pages"] == free0


def test_bad_free_raises_and_changes_nothing(m):
    p = m.alloc_pages(order=2)
    m.free_pages(p)
    m.drain_all_pages()
    before = (m.buddyinfo(), m.pagetypeinfo(), m.nr_free_pages())
    with pytest.raises(ValueError, match="not allocated"):
        m.free_pages(p)
    with pytest.raises(ValueError, match="MAX_PAGE_ORDER"):
        m.alloc_pages(order=11)
    with pytest.raises(ValueError, match="unknown gfp flag"):
        m.alloc_pages(order=0, gfp="GFP_KERNEL|__GFP_BOGUS")
    assert (m.buddyinfo(), m.pagetypeinfo(), m.nr_free_pages()) == before


def test_bulk(m):
    free0 = m.nr_free_pages()
    pages = m.alloc_pages_bulk(300, gfp="GFP_KERNEL")
    assert len(pages) == 300 and all(p.order == 0 for p in pages)
    m.free_pages_bulk(pages)
    m.drain_all_pages()
    assert m.nr_free_pages() == free0


def test_vmalloc(m):
    a = m.vmalloc(3 * 4096 + 1)
    info = m.vmallocinfo()
    assert f"0x{a:016x}-" in info and "pages=4 vmalloc" in info
    m.vfree(a)
    with pytest.raises(ValueError, match="nonexistent vm area"):
        m.vfree(a)
    with pytest.raises(ValueError):
        m.vmalloc(0)


def test_design_and_vcpus():
    with pagelab.Machine(**SMALL, design="v6.18+pcp_owner+mt_counts", vcpus=2) as m:
        seen = []

        def other():
            with m.cpu(1):
                seen.append(m.alloc_pages(0))
        t = threading.Thread(target=other)
        t.start()
        t.join()
        with m.cpu(0):
            m.free_pages(seen[0])      # a page vCPU 1 allocated, freed on vCPU 0
            m.drain_all_pages()
        assert m.check() == 0


def test_bad_config_is_one_clear_error():
    with pytest.raises(ValueError, match="unknown design preset or switch 'nope'"):
        pagelab.Machine(**SMALL, design="v6.18+nope")
    with pytest.raises(ValueError, match="unknown config key 'memory'"):
        pagelab.Machine(memory="64M")
    with pytest.raises(ValueError, match="mem=lots"):
        pagelab.Machine(mem="lots")


def test_workload_churn_is_deterministic(m):
    free0 = m.nr_free_pages()
    a = m.run_workload("churn", rounds=2000, seed=3)
    m.drain_all_pages()
    assert m.nr_free_pages() == free0          # released
    with pagelab.Machine(**SMALL) as fresh:         # the same seed on a fresh machine
        assert fresh.run_workload("churn", rounds=2000, seed=3) == a
    b = m.run_workload("churn", rounds=2000, seed=3, keep=True)
    assert b["live_blocks"] > 0
    assert m.nr_free_pages() < free0
    assert ">100000" not in m.pagetypeinfo()
    m.release_workloads()
    m.drain_all_pages()
    assert m.nr_free_pages() == free0
    with pytest.raises(ValueError, match="unknown workload"):
        m.run_workload("kbuild2")


def test_closed_machine_refuses(m):
    other = pagelab.Machine(**SMALL)
    other.close()
    with pytest.raises(ValueError, match="closed"):
        other.buddyinfo()


def test_two_machines_on_one_thread():
    """Calls on A after the thread entered B go to A (the API re-enters)."""
    a, b = pagelab.Machine(**SMALL), pagelab.Machine(**SMALL)
    free_a, free_b = a.nr_free_pages(), b.nr_free_pages()
    pa = a.alloc_pages(3)
    pb = b.alloc_pages(2)
    a.free_pages(pa)                   # the thread is on b now: must go to a
    b.free_pages(pb)
    for m, free in ((a, free_a), (b, free_b)):
        m.drain_all_pages()
        assert m.nr_free_pages() == free and m.check() == 0
        m.close()


def test_machine_profile_and_bad_profile():
    with pagelab.Machine(machine="kvm-smp8", design="v6.18+pcp_owner") as m:
        assert m.total_pages() >= (8 << 30) >> 12
        with m.cpu(7):                                   # the profile's 8 vCPUs
            m.free_pages(m.alloc_pages(1))
        assert m.check() == 0
    with pytest.raises(ValueError, match="unknown machine profile 'nope'"):
        pagelab.Machine(machine="nope")


def test_vmstat_and_lock_stat():
    """/proc/vmstat counts pages by zone as the kernel does; /proc/lock_stat needs lock_stat=1."""
    with pagelab.Machine(lock_stat=1, **SMALL) as m:
        before = dict(line.split() for line in m.vmstat().splitlines())
        pages = [m.alloc_pages(order=1) for _ in range(3)]
        after = dict(line.split() for line in m.vmstat().splitlines())
        assert int(after["pgalloc_normal"]) - int(before["pgalloc_normal"]) == 6
        for p in pages:
            m.free_pages(p)
        after = dict(line.split() for line in m.vmstat().splitlines())
        assert int(after["pgfree"]) - int(before["pgfree"]) == 6
        text = m.lock_stat()
        assert text.startswith("lock_stat version 0.4\n") and "&zone->lock:" in text
        assert m.check() == 0
    with pagelab.Machine(**SMALL) as m:
        before = m.buddyinfo()
        with pytest.raises(ValueError, match="lock_stat"):
            m.lock_stat()
        assert m.buddyinfo() == before
