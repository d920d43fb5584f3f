"""The worked example of docs/howto/port-a-patch.md: targeted_drain against v6.18.

Three vCPUs. vCPU 0 uses up the machine, vCPUs 1 and 2 free 20 and 4 pages
(they stay on their per-CPU lists), then vCPU 0 asks for 8 pages back. The
baseline's slow path drains every CPU (drain_all_pages()); targeted_drain
drains only the CPU holding the most pages of the type, only as much as the
allocation needs. Run: PAGELAB_BENCH=build/pagelab-bench .venv/bin/python
docs/examples/targeted_drain.py
"""
import pagelab

GFP = "GFP_HIGHUSER_MOVABLE|__GFP_NOWARN"

for design in ("v6.18", "v6.18+targeted_drain"):
    with pagelab.Machine(mem="64M", dma32="16M", vcpus=3, design=design) as m:
        held = []
        with m.cpu(0):
            while True:
                try:
                    held.append(m.alloc_pages(order=0, gfp=GFP))
                except MemoryError:
                    break
        for cpu, n in ((1, 20), (2, 4)):
            with m.cpu(cpu):
                for _ in range(n):
                    m.free_pages(held.pop())
        before = m.counters()
        with m.cpu(0):
            got = [m.alloc_pages(order=0, gfp=GFP) for _ in range(8)]
        c = {k: v - before.get(k, 0) for k, v in m.counters().items()}
        print(f"{design:22} got {len(got)} pages; CPUs drained: "
              f"drain_all_pages {c['DRAIN_ALL_CPUS']}, targeted {c['TARGETED_DRAIN_CPUS']}")
        assert len(got) == 8 and m.check() == 0
        if design.endswith("targeted_drain"):
            assert c["DRAIN_ALL_CPUS"] == 0 and c["TARGETED_DRAIN_CPUS"] >= 1
        else:
            assert c["TARGETED_DRAIN_CPUS"] == 0 and c["DRAIN_ALL_CPUS"] >= 1
        for p in got + held:
            m.free_pages(p)
