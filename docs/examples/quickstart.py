"""Ten lines: a machine, pages allocated and freed, /proc/buddyinfo."""
import pagelab

with pagelab.Machine(mem="256M", dma32="64M", design="v6.18+pcp_owner+mt_counts") as m:
    pages = [m.alloc_pages(order=o % 4) for o in range(64)]
    print(m.buddyinfo(), end="")
    for p in pages:
        m.free_pages(p)
    print(pagelab.version(), "check:", m.check())
