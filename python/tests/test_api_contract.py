"""The Python API's argument contract (pagelab.Machine): every argument of
the wrong type raises TypeError and every value out of range ValueError,
each with a message naming the argument, before anything reaches the C
library; the machine's reports are the same afterwards (nothing changed).
A bool is not a count. Out of memory stays MemoryError."""
import pytest

pagelab = pytest.importorskip("pagelab")
try:
    pagelab.version()
except ImportError as e:        # no libpagelab.so: the API cannot be tested here
    pytest.skip(str(e), allow_module_level=True)

HUGE = 10 ** 30

# (call, argument, bad value, exception, text in the message)
CASES = [
    ("alloc_pages", "order", "3", TypeError, "order"),
    ("alloc_pages", "order", 1.5, TypeError, "order"),
    ("alloc_pages", "order", True, TypeError, "order"),
    ("alloc_pages", "order", -1, ValueError, "MAX_PAGE_ORDER"),
    ("alloc_pages", "order", 11, ValueError, "MAX_PAGE_ORDER"),
    ("alloc_pages", "gfp", -1, ValueError, "gfp"),
    ("alloc_pages", "gfp", HUGE, ValueError, "gfp"),
    ("alloc_pages", "gfp", True, TypeError, "gfp"),
    ("alloc_pages", "gfp", None, TypeError, "gfp"),
    ("alloc_pages_bulk", "nr", -1, ValueError, "nr"),
    ("alloc_pages_bulk", "nr", HUGE, ValueError, "nr"),
    ("alloc_pages_bulk", "nr", "8", TypeError, "nr"),
    ("alloc_pages_bulk", "nr", True, TypeError, "nr"),
    ("free_pages", "page", None, TypeError, "Page"),
    ("free_pages", "page", 4096, TypeError, "Page"),
    ("free_pages_bulk", "pages", "x", TypeError, "Page"),
    ("free_pages_bulk", "pages", [None], TypeError, "Page"),
    ("vmalloc", "size", 0, ValueError, "size"),
    ("vmalloc", "size", -4096, ValueError, "size"),
    ("vmalloc", "size", HUGE, ValueError, "size"),
    ("vmalloc", "size", True, TypeError, "size"),
    ("vmalloc", "size", 4096.0, TypeError, "size"),
    ("vfree", "addr", -1, ValueError, "addr"),
    ("vfree", "addr", HUGE, ValueError, "addr"),
    ("vfree", "addr", "0x1000", TypeError, "addr"),
    ("run_workload", "rounds", -1, ValueError, "rounds"),
    ("run_workload", "rounds", HUGE, ValueError, "rounds"),
    ("run_workload", "rounds", True, TypeError, "rounds"),
    ("run_workload", "seed", -1, ValueError, "seed"),
    ("run_workload", "seed", 2 ** 64, ValueError, "seed"),
    ("run_workload", "seed", "1", TypeError, "seed"),
    ("enter", "cpu", -1, ValueError, "cpu"),
    ("enter", "cpu", HUGE, ValueError, "cpu"),
    ("enter", "cpu", True, TypeError, "cpu"),
    ("cpu", "cpu", -1, ValueError, "cpu"),
    ("cpu", "cpu", "0", TypeError, "cpu"),
]


def _call(m, fn, arg, value):
    if fn == "cpu":
        with m.cpu(value):
            pass
    elif fn == "run_workload":
        m.run_workload("churn", **({"rounds": 1} if arg == "seed" else {}), **{arg: value})
    else:
        getattr(m, fn)(**{arg: value})


@pytest.mark.parametrize("fn,arg,value,exc,text", CASES,
                         ids=[f"{c[0]}-{c[1]}={c[2]!r}"[:60] for c in CASES])
def test_bad_argument_raises_and_changes_nothing(fn, arg, value, exc, text):
    with pagelab.Machine(mem="64M", dma32="16M", vcpus=2) as m:
        m.enter(0)
        keep = m.alloc_pages(order=3)               # a machine with something in it
        before = (m.nr_free_pages(), m.buddyinfo(), m.vmallocinfo(), m.counters())
        with pytest.raises(exc, match=text):
            _call(m, fn, arg, value)
        m.enter(0)
        assert (m.nr_free_pages(), m.buddyinfo(), m.vmallocinfo(), m.counters()) == before
        m.free_pages(keep)
        assert m.check() == 0
