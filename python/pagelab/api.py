"""The in-process Python API: a pagelab machine driven through libpagelab.so
(cffi, ABI mode: no compiler needed at import).

    import pagelab
    with pagelab.Machine(mem="64M", dma32="16M", design="v6.18+pcp_owner") as m:
        with m.cpu(0):
            pages = [m.alloc_pages(order=2) for _ in range(8)]
            print(m.buddyinfo())
            for p in pages:
                m.free_pages(p)

A machine is created from pagelab-bench's keys (mem, dma32, vcpus, design,
debug, lock_stat, pcp, ...; `pagelab list`). Kernel code runs on a vCPU: the
calling thread enters one with `m.cpu(n)` (or `m.enter(n)`), after which
alloc_pages, vmalloc and the rest run there. Bad input raises ValueError with
the library's warning and changes nothing; an allocation that fails raises
MemoryError. The /proc reports come back as str.

The shared library is found at $PAGELAB_LIB, next to this package
(pip install .), or in the source tree's build/ directory (make build).
"""
from __future__ import annotations

import os
import threading
from contextlib import contextmanager
from pathlib import Path

_CDEF = """
typedef unsigned int gfp_t;
struct pl_machine;
struct pl_config;
struct page;
struct zone;
const char *pl_version(void);
const char *pl_git_commit(void);
struct pl_config *pl_config_new(void);
void pl_config_free(struct pl_config *cfg);
int pl_config_set(struct pl_config *cfg, const char *key, const char *value, char *err, size_t errsize);
int pl_design_check(const char *spec, char *canon, size_t size, char *err, size_t errsize);
int pl_gfp_parse(const char *spec, gfp_t *out, char *err, size_t errsize);
struct pl_machine *pl_machine_create(const struct pl_config *cfg);
void pl_machine_destroy(struct pl_machine *m);
int pl_enter(struct pl_machine *m, unsigned int cpu);
void pl_leave(void);
struct page *alloc_pages(gfp_t gfp, unsigned int order);
int __free_pages(struct page *page, unsigned int order);
unsigned long alloc_pages_bulk(gfp_t gfp, unsigned long nr_pages, struct page **page_array);
long free_pages_bulk(unsigned long nr, struct page **pages);
unsigned long pl_page_pfn(const struct page *page);
void drain_all_pages(struct zone *zone);
int pl_vmstat_tick(void);
void *vmalloc(unsigned long size);
int vfree(const void *addr);
unsigned long pl_nr_free_pages(const struct pl_machine *m);
unsigned int pl_vm_event_count(void);
unsigned long pl_machine_max_pfn(const struct pl_machine *m);
extern const char *const pl_vm_event_names[];
void pl_events_sum(const struct pl_machine *m, unsigned long *out);
int pl_check_machine(struct pl_machine *m);
long pl_show_buddyinfo(struct pl_machine *m, char *buf, size_t size);
long pl_show_pagetypeinfo(struct pl_machine *m, char *buf, size_t size);
long pl_show_zoneinfo(struct pl_machine *m, char *buf, size_t size);
long pl_show_vmallocinfo(struct pl_machine *m, char *buf, size_t size);
long pl_show_vmstat(struct pl_machine *m, char *buf, size_t size);
long pl_show_lock_stat(struct pl_machine *m, char *buf, size_t size);
struct pl_churn;
struct pl_churn_result { unsigned long live_blocks, free_blocks, allocs, frees; };
struct pl_churn *pl_churn_run(struct pl_machine *m, uint64_t seed, unsigned long rounds,
                              struct pl_churn_result *res);
void pl_churn_release(struct pl_churn *st);
void pl_warn_last(char *buf, size_t len);
void pl_warn_set_quiet(bool quiet);
"""

_lib = None
_ffi = None
_lock = threading.Lock()
# The machine and vCPU the calling thread has entered: the library's pl_this
# is per thread too, so a call on machine A after the thread entered B must
# enter A again first.
_this = threading.local()


def _candidates() -> list[Path]:
    here = Path(__file__).resolve().parent
    out = []
    if os.environ.get("PAGELAB_LIB"):
        out.append(Path(os.environ["PAGELAB_LIB"]))
    out.append(here / "_lib" / "libpagelab.so")          # pip install .
    out.append(here.parent.parent / "build" / "libpagelab.so")   # the source tree
    return out


def library():
    """(ffi, lib): libpagelab.so, loaded once."""
    global _lib, _ffi
    with _lock:
        if _lib is None:
            import cffi
            ffi = cffi.FFI()
            ffi.cdef(_CDEF)
            tried = _candidates()
            for path in tried:
                if path.is_file():
                    _lib = ffi.dlopen(str(path))
                    break
            else:
                raise ImportError("libpagelab.so not found (tried " + ", ".join(map(str, tried))
                                  + "): run `make build`, `pip install .`, or set PAGELAB_LIB")
            _ffi = ffi
            _lib.pl_warn_set_quiet(True)      # warnings become exceptions' messages
        return _ffi, _lib


def version() -> str:
    """The library's version and git commit, e.g. '0.10.0 (git 1e4458661f02)'."""
    ffi, lib = library()
    return f"{ffi.string(lib.pl_version()).decode()} (git {ffi.string(lib.pl_git_commit()).decode()})"


def _last_warning() -> str:
    ffi, lib = library()
    buf = ffi.new("char[]", 256)
    lib.pl_warn_last(buf, 256)
    return ffi.string(buf).decode(errors="replace").strip()


U64_MAX = (1 << 64) - 1
MAX_CHURN_ROUNDS = 1_000_000_000    # as pagelab-bench's rounds= key


def _int_arg(name: str, v, lo: int, hi: int) -> int:
    """An int argument in [@lo, @hi]: TypeError for another type (bool too), ValueError outside."""
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError(f"{name}: an int, not {type(v).__name__}")
    if not lo <= v <= hi:
        raise ValueError(f"{name} {v} is not in {lo}..{hi}")
    return v


def _gfp(spec) -> int:
    if isinstance(spec, int) and not isinstance(spec, bool):
        return _int_arg("gfp", spec, 0, 0xFFFFFFFF)
    if not isinstance(spec, str):
        raise TypeError(f"gfp: flags as a string (GFP_KERNEL|__GFP_ZERO) or an int, not "
                        f"{type(spec).__name__}")
    ffi, lib = library()
    out, err = ffi.new("gfp_t *"), ffi.new("char[]", 160)
    if lib.pl_gfp_parse(str(spec).encode(), out, err, 160):
        raise ValueError(ffi.string(err).decode())
    return out[0]


def design_canonical(spec: str) -> str:
    """The canonical string of design @spec (pl_design_check(): the one C
    parser every front end uses), e.g. "pcp-owner" -> "v6.18+pcp_owner";
    ValueError with the parser's reason for a spec it refuses."""
    ffi, lib = library()
    canon, err = ffi.new("char[]", 512), ffi.new("char[]", 160)
    if lib.pl_design_check(str(spec).encode(), canon, 512, err, 160):
        raise ValueError(f"design '{spec}': {ffi.string(err).decode()}")
    return ffi.string(canon).decode()


class Page:
    """A block from alloc_pages: its struct page pointer, order and pfn."""

    __slots__ = ("ptr", "order", "pfn")

    def __init__(self, ptr, order: int, pfn: int):
        self.ptr, self.order, self.pfn = ptr, order, pfn

    def __repr__(self) -> str:
        return f"Page(pfn={self.pfn}, order={self.order})"


class Machine:
    """A simulated machine (pl_machine_create) from key=value settings.

    Keyword arguments are pagelab-bench's machine keys: machine="kvm-smp8" (a
    profile, `pagelab list machines`), mem="64M", dma32="16M", vcpus=4,
    design="v6.18+pcp_owner", debug=0..3, lock_stat=1, pcp=0, ...
    """

    def __init__(self, **settings):
        ffi, lib = library()
        self._ffi, self._lib = ffi, lib
        cfg = lib.pl_config_new()
        if cfg == ffi.NULL:
            raise MemoryError("pl_config_new")
        try:
            err = ffi.new("char[]", 256)
            # a machine profile first: it sets the hardware the other keys adjust
            ordered = sorted(settings.items(), key=lambda kv: kv[0] != "machine")
            for key, value in ordered:
                if isinstance(value, bool):
                    value = int(value)
                if lib.pl_config_set(cfg, key.encode(), str(value).encode(), err, 256):
                    raise ValueError(ffi.string(err).decode())
            m = lib.pl_machine_create(cfg)
        finally:
            lib.pl_config_free(cfg)
        if m == ffi.NULL:
            raise ValueError(f"cannot create the machine: {_last_warning() or 'bad config'}")
        self._m = m
        self.settings = dict(settings)
        # the design built, as every front end reports it (pl_design_canonical())
        self.design = design_canonical(str(settings.get("design", "v6.18")))
        self._last_cpu: dict[int, int] = {}   # thread id -> the vCPU it last entered here

    # ---- lifetime ---------------------------------------------------------
    def close(self) -> None:
        """Destroy the machine (leaving it first if this thread is on one of its vCPUs)."""
        if self._m is not None:
            if getattr(_this, "machine", None) is self:
                self.leave()
            self._lib.pl_machine_destroy(self._m)
            self._m = None

    def __enter__(self) -> "Machine":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def _machine(self):
        if self._m is None:
            raise ValueError("the machine is closed")
        return self._m

    # ---- vCPUs ------------------------------------------------------------
    def enter(self, cpu: int = 0) -> None:
        """Make the calling thread vCPU @cpu of this machine."""
        _int_arg("cpu", cpu, 0, 0xFFFFFFFF)
        if self._lib.pl_enter(self._machine(), cpu):
            raise ValueError(_last_warning() or f"cannot enter vCPU {cpu}")
        _this.machine, _this.cpu = self, cpu
        self._last_cpu[threading.get_ident()] = cpu

    def leave(self) -> None:
        """Detach the calling thread from its vCPU."""
        self._lib.pl_leave()
        _this.machine = None

    @contextmanager
    def cpu(self, cpu: int = 0):
        """`with m.cpu(n):` run the block as vCPU @n, then go back to where the thread was."""
        _int_arg("cpu", cpu, 0, 0xFFFFFFFF)
        prev = (getattr(_this, "machine", None), getattr(_this, "cpu", 0))
        self.enter(cpu)
        try:
            yield self
        finally:
            if prev[0] is not None and prev[0]._m is not None:
                prev[0].enter(prev[1])
            else:
                self.leave()

    def _need_cpu(self) -> None:
        """Be on one of this machine's vCPUs: the one this thread last used here, else 0."""
        self._machine()
        if getattr(_this, "machine", None) is not self:
            self.enter(self._last_cpu.get(threading.get_ident(), 0))

    # ---- the page allocator ----------------------------------------------
    def alloc_pages(self, order: int = 0, gfp="GFP_KERNEL") -> Page:
        """alloc_pages(gfp, order); MemoryError if it fails, ValueError for bad input."""
        if isinstance(order, bool) or not isinstance(order, int):
            raise TypeError(f"order: an int, not {type(order).__name__}")
        if not 0 <= order <= 10:
            raise ValueError(f"order {order} is not in 0..10 (MAX_PAGE_ORDER)")
        gfp = _gfp(gfp)
        self._need_cpu()
        p = self._lib.alloc_pages(gfp, order)
        if p == self._ffi.NULL:
            raise MemoryError(f"alloc_pages(order={order}) failed")
        return Page(p, order, self._lib.pl_page_pfn(p))

    def free_pages(self, page: Page) -> None:
        """__free_pages(page, page.order); ValueError (nothing changed) for a bad free."""
        if not isinstance(page, Page):
            raise TypeError(f"free_pages: a Page from alloc_pages(), not {type(page).__name__}")
        self._need_cpu()
        rc = getattr(self._lib, "__free_pages")(page.ptr, page.order)   # no name mangling
        if rc:
            raise ValueError(_last_warning() or f"__free_pages: error {rc}")

    def alloc_pages_bulk(self, nr: int, gfp="GFP_KERNEL") -> list[Page]:
        """alloc_pages_bulk(): up to @nr order-0 pages (fewer when memory is short)."""
        _int_arg("nr", nr, 0, self.total_pages())    # the array is sized by @nr
        gfp = _gfp(gfp)
        self._need_cpu()
        arr = self._ffi.new("struct page *[]", nr)
        got = self._lib.alloc_pages_bulk(gfp, nr, arr)
        return [Page(arr[i], 0, self._lib.pl_page_pfn(arr[i])) for i in range(nr)
                if arr[i] != self._ffi.NULL][:got]

    def free_pages_bulk(self, pages: list[Page]) -> None:
        """free_pages_bulk() of order-0 pages; ValueError (nothing freed) for a bad entry."""
        if not isinstance(pages, (list, tuple)) or not all(isinstance(p, Page) for p in pages):
            raise TypeError("free_pages_bulk: a list of Pages from alloc_pages()/_bulk()")
        self._need_cpu()
        if any(p.order for p in pages):
            raise ValueError("free_pages_bulk takes order-0 pages")
        arr = self._ffi.new("struct page *[]", [p.ptr for p in pages])
        rc = self._lib.free_pages_bulk(len(pages), arr)
        if rc < 0:
            raise ValueError(_last_warning() or f"free_pages_bulk: error {rc}")

    def drain_all_pages(self) -> None:
        """Empty every vCPU's per-CPU lists into the buddy."""
        self._need_cpu()
        self._lib.drain_all_pages(self._ffi.NULL)

    # ---- vmalloc ----------------------------------------------------------
    def vmalloc(self, size: int) -> int:
        """vmalloc(size): the area's address (an int); MemoryError or ValueError."""
        _int_arg("vmalloc: size", size, 1, U64_MAX)
        self._need_cpu()
        p = self._lib.vmalloc(size)
        if p == self._ffi.NULL:
            raise MemoryError(_last_warning() or f"vmalloc({size}) failed")
        return int(self._ffi.cast("uintptr_t", p))

    def vfree(self, addr: int) -> None:
        """vfree(addr); ValueError (nothing changed) for an address that is no area's start."""
        _int_arg("vfree: addr", addr, 0, U64_MAX)
        self._need_cpu()
        rc = self._lib.vfree(self._ffi.cast("void *", addr))
        if rc:
            raise ValueError(_last_warning() or f"vfree: error {rc}")

    # ---- workloads ---------------------------------------------------------
    def run_workload(self, name: str = "churn", rounds: int | None = None, seed: int = 1,
                     keep: bool = False) -> dict:
        """Run a built-in workload on the current vCPU; returns what it did.

        "churn": the kernel-build-like churn of pagelab-bench's pagetypeinfo and
        show suites (fill to 5% free, free half, replace @rounds random blocks;
        default max_pfn/8 as the suites). With @keep the survivors stay allocated
        (a fragmented machine to look at) until release_workloads() or close().
        """
        if name != "churn":
            raise ValueError(f"unknown workload '{name}' (churn)")
        if rounds is not None:
            _int_arg("rounds", rounds, 0, MAX_CHURN_ROUNDS)
        _int_arg("seed", seed, 0, U64_MAX)
        self._need_cpu()
        if rounds is None:
            rounds = self.total_pages() // 8
        res = self._ffi.new("struct pl_churn_result *")
        st = self._lib.pl_churn_run(self._machine(), seed, rounds, res)
        if st == self._ffi.NULL:
            raise MemoryError("pl_churn_run: out of host memory")
        out = {"live_blocks": res.live_blocks, "free_blocks": res.free_blocks,
               "allocs": res.allocs, "frees": res.frees}
        if keep:
            self.__dict__.setdefault("_kept", []).append(st)
        else:
            self._lib.pl_churn_release(st)
        return out

    def release_workloads(self) -> None:
        """Free what run_workload(keep=True) left allocated."""
        self._need_cpu()
        for st in self.__dict__.pop("_kept", []):
            self._lib.pl_churn_release(st)

    # ---- counters and reports -----------------------------------------------
    def nr_free_pages(self) -> int:
        return self._lib.pl_nr_free_pages(self._machine())

    def total_pages(self) -> int:
        """max_pfn: the machine's pages, holes and all."""
        return self._lib.pl_machine_max_pfn(self._machine())

    def counters(self) -> dict[str, int]:
        """Every vCPU's event counters summed (PGALLOC, PGFREE, ...) and nr_free_pages."""
        n = self._lib.pl_vm_event_count()
        out = self._ffi.new("unsigned long[]", n)
        self._lib.pl_events_sum(self._machine(), out)
        names = self._lib.pl_vm_event_names
        d = {self._ffi.string(names[i]).decode(): int(out[i]) for i in range(n)}
        d["nr_free_pages"] = self.nr_free_pages()
        return d

    def check(self) -> int:
        """The debug checker: 0 when every list and counter recounts right."""
        return self._lib.pl_check_machine(self._machine())

    def _report(self, fn) -> str:
        m = self._machine()
        need = fn(m, self._ffi.NULL, 0)
        if need < 0:     # refused, with the library's warning
            raise ValueError(_last_warning() or f"report: error {need}")
        for _ in range(8):   # the machine may change between measure and write
            buf = self._ffi.new("char[]", need + 1)
            n = fn(m, buf, need + 1)
            if n >= 0:
                return self._ffi.string(buf, n).decode()
            need = need * 2 + 256
        raise RuntimeError("report kept growing")

    def buddyinfo(self) -> str:
        """/proc/buddyinfo."""
        return self._report(self._lib.pl_show_buddyinfo)

    def pagetypeinfo(self) -> str:
        """/proc/pagetypeinfo."""
        return self._report(self._lib.pl_show_pagetypeinfo)

    def zoneinfo(self) -> str:
        """The page allocator's part of /proc/zoneinfo."""
        return self._report(self._lib.pl_show_zoneinfo)

    def vmallocinfo(self) -> str:
        """/proc/vmallocinfo."""
        return self._report(self._lib.pl_show_vmallocinfo)

    def vmstat(self) -> str:
        """/proc/vmstat: the items pagelab keeps, in the kernel's names and order."""
        return self._report(self._lib.pl_show_vmstat)

    def lock_stat(self) -> str:
        """/proc/lock_stat (needs Machine(lock_stat=1); ValueError otherwise)."""
        return self._report(self._lib.pl_show_lock_stat)

    def __repr__(self) -> str:
        state = "closed" if self._m is None else f"{self.nr_free_pages()} pages free"
        args = ", ".join(f"{k}={v!r}" for k, v in self.settings.items())
        return f"pagelab.Machine({args}) [{state}]"
