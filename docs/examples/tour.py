# The README's Python tour: seed 003 routes frees to the owning CPU's list.
import pagelab

for design in ("v6.18", "v6.18+pcp_owner"):
    with pagelab.Machine(mem="1G", dma32="256M", vcpus=2, design=design) as m:
        pages = [m.alloc_pages(order=0) for _ in range(4096)]   # on vCPU 0
        with m.cpu(1):                                           # freed on vCPU 1
            for p in pages:
                m.free_pages(p)
        c = m.counters()
        print(f"{design:16} pages moved under zone->lock {c['ZONE_LOCK_PAGES']:5}  routed to the owner {c['PCP_REMOTE_FREE']:5}  check {m.check()}")
