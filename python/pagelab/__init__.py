"""pagelab: the Linux page allocator and vmalloc in userspace, and the lab
bench around them.

`pagelab.Machine` drives a machine in-process through libpagelab.so (see
pagelab.api); the `pagelab` command (pagelab.cli) runs, compares and reports
pagelab-bench suites. The API is imported on first use, so the command works
without cffi or the shared library.
"""

__version__ = "0.10.0"

__all__ = ["Machine", "Page", "version", "design_canonical"]


def __getattr__(name):
    if name in __all__:
        from . import api
        return getattr(api, name)
    raise AttributeError(f"module 'pagelab' has no attribute '{name}'")
