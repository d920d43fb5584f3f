"""__GFP_ZERO clears a block page by page: the instructions it costs are per page, whatever the order.

The kernel's post_alloc_hook() zeroes a new block with kernel_init_pages(),
one clear_highpage() per page, so clearing an order-3 block is eight page
clears.  pagelab does the same (clear_page() per page in prep_new_page()).
A single memset() of the whole block would be a call with a run-time size,
which glibc serves with a byte-wise "rep stosb" that callgrind counts per
byte (eight times the count of the inlined word-wise clear of one page):
the instruction counts of vmalloc's high-order blocks (a06157804399) would
then carry a cost that no kernel pays, as seed 000's aligned rows did.
"""
import shutil

import pytest

from pagelab import budgets, cgcount


def _zero_cost(order: int) -> float:
    """Instructions per iteration that __GFP_ZERO adds to an order-@order alloc/split/free."""
    base = {"order": str(order), "design": "v6.18", "floor": "0", "mem": "256M",
            "dma32": "64M", "reps": "1", "test_loop_count": "200:400"}
    plain = cgcount.parse_path("page_alloc_high_order", dict(base, zero="0"))
    zeroed = cgcount.parse_path("page_alloc_high_order", dict(base, zero="1"))
    a, b = cgcount.per_op_many([(budgets.bench_binary(), plain),
                                (budgets.bench_binary(), zeroed)], workers=1)
    return b - a


def test_zeroing_costs_the_same_per_page_at_every_order():
    if shutil.which("valgrind") is None:
        pytest.fail("valgrind is missing: scripts/install-deps.sh installs it")
    page = _zero_cost(0)
    assert page > 0            # a zeroed page does cost something
    for order in (2, 3):
        per_page = _zero_cost(order) / (1 << order)
        assert per_page == pytest.approx(page, rel=0.05), (order, per_page, page)
