"""pagelab: the lab bench around libpagelab (the Linux page allocator in userspace)."""

__version__ = "0.1.0"
