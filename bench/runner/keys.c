// SPDX-License-Identifier: MIT
/*
 * keys.c - what every pagelab-bench key means and its default, for
 * `pagelab-bench --list` (and through it `pagelab list`). A row names a
 * suite, or NULL for the machine keys every suite reads the same way
 * (bench_machine() in machine.c); a suite's own row wins. The defaults are
 * the ones the suites pass to param_ulong()/param_str(): a new key needs a
 * row here, and test bench_list fails while one is missing.
 */
#include <string.h>
#include "bench.h"

struct key_doc {
	const char *suite;	/* NULL: any suite */
	const char *key;
	const char *def;
	const char *meaning;
};

static const struct key_doc docs[] = {
	/* the machine (bench_machine) */
	{ NULL, "mem", "16G", "memory size (K/M/G suffixes), a multiple of 2 MiB" },
	{ NULL, "dma32", "4G", "end of ZONE_DMA32 (clipped to mem)" },
	{ NULL, "vcpus", "1", "virtual CPUs of the machine" },
	{ NULL, "debug", "0", "checker level: 0 off, 1 at teardown, 2 after slow-path events, 3 after every op" },
	{ NULL, "lock_stat", "0", "time lock holds and waits (1 on)" },
	{ NULL, "pcp", "1", "per-CPU page lists (0: every alloc/free goes to the buddy)" },
	{ NULL, "design", "v6.18", "comma-separated designs, each PRESET[+SWITCH...] (presets and switches below)" },
	{ NULL, "seed", "1", "PRNG seed of the workload" },
	{ NULL, "reps", "3", "repetitions per design (the best or each is reported)" },
	{ NULL, "threads", "1", "real threads, each entering its own vCPU" },
	{ NULL, "machine", "(none)", "a machine profile: CPUs, memory layout, topology (machine profiles below)" },
	{ NULL, "pin", "1", "pin the main thread to its CPU (every suite; bench/harness.c)" },
	{ NULL, "vtime", "0", "1: virtual time: every record gets a deterministic \"vtime\" figure" },
	{ NULL, "vt_costs", "anchors", "with vtime=1, the model's cost set: anchors (the LLFree anchor machine) or host (this build host, measured here)" },
	{ NULL, "snapshot_ms", "(off)", "every N ms of wall time: buddyinfo, pagetypeinfo, vmstat, zoneinfo into snapshot_dir (outside measured regions)" },
	{ NULL, "snapshot_ops", "(off)", "the same every K page operations (pages allocated + freed): deterministic, for vtime=1" },
	{ NULL, "snapshot_dir", "(none)", "where snapshots go: DIR/NNNN/{buddyinfo,...} and DIR/index" },
	/* llfree_anchors */
	{ "llfree_anchors", "threads", "1", "threads (vtime=1: vCPUs in virtual time) running the workload" },
	{ "llfree_anchors", "order", "0", "allocation order" },
	{ "llfree_anchors", "mem", "the profile's, else 16G", "machine memory (machine= gives its own)" },
	{ "llfree_anchors", "vcpus", "the profile's CPUs (at least threads), else threads", "the machine's vCPUs, of which threads run" },
	{ "llfree_anchors", "allocs", "20000 (order 0), 64", "blocks per thread" },
	{ "llfree_anchors", "workload", "bulk,repeat,rand", "which of the LLFree artifact's workloads" },
	{ "llfree_anchors", "pcp_autotune", "1", "0: pagelab's own switch, a fixed pcp->high as Linux 6.0 (no auto-tuning)" },
	{ "llfree_anchors", "warmup", "0", "1: an untimed bulk pass first (first touches out of the timed phases)" },
	{ "llfree_anchors", "clock", "wall", "real threads' clock: wall, or thread (each thread's CPU time: a loaded host's waits left out)" },
	{ "llfree_anchors", "topology", "the profile's, else 2x26x1", "SOCKETSxCORESxTHREADS pricing cache line transfers" },
	/* pagetypeinfo */
	{ "pagetypeinfo", "design", "v6.18,mt-counts", NULL },
	{ "pagetypeinfo", "reads", "10000", "/proc/pagetypeinfo reads per measurement" },
	{ "pagetypeinfo", "rounds", "max_pfn/8", "churn steps of the kernel-build-like workload" },
	/* buddy_alloc_free */
	{ "buddy_alloc_free", "order", "0", "allocation order" },
	{ "buddy_alloc_free", "nr", "1000000", "blocks per measurement and thread" },
	{ "buddy_alloc_free", "batch", "512", "blocks allocated before they are freed (the batch column)" },
	{ "buddy_alloc_free", "vcpus", "threads", "vCPUs (at least threads)" },
	/* seed 003's workloads */
	{ "alloc_many_free_few", "design", "v6.18,pcp-owner", NULL },
	{ "alloc_many_free_few", "vcpus", "8,32,128", "comma-separated vCPU counts to sweep" },
	{ "alloc_many_free_few", "ops", "2000000", "page operations per run" },
	{ "alloc_many_free_few", "slice", "32", "operations a vCPU runs before the next one's turn" },
	{ "alloc_many_free_few", "exit_pages", "32768", "pages an exiting task frees (exit_avalanche)" },
	{ "alloc_many_free_few", "lock_stat", "1", "time lock holds and waits" },
	{ "alloc_many_free_few", "tick_ops", "100000", "a vCPU's vmstat tick every this many of its page operations (0: none)" },
	{ "exit_avalanche", "design", "v6.18,pcp-owner", NULL },
	{ "exit_avalanche", "vcpus", "8,32,128", "comma-separated vCPU counts to sweep" },
	{ "exit_avalanche", "ops", "2000000", "page operations per run" },
	{ "exit_avalanche", "slice", "32", "operations a vCPU runs before the next one's turn" },
	{ "exit_avalanche", "exit_pages", "32768", "pages an exiting task frees" },
	{ "exit_avalanche", "lock_stat", "1", "time lock holds and waits" },
	{ "exit_avalanche", "tick_ops", "100000", "a vCPU's vmstat tick every this many of its page operations (0: none)" },
	{ "kbuild", "design", "v6.18,pcp-owner", NULL },
	{ "kbuild", "vcpus", "8,32,128", "comma-separated vCPU counts to sweep" },
	{ "kbuild", "ops", "2000000", "page operations per run" },
	{ "kbuild", "slice", "32", "operations a vCPU runs before the next one's turn" },
	{ "kbuild", "exit_pages", "32768", "pages an exiting task frees (exit_avalanche)" },
	{ "kbuild", "lock_stat", "1", "time lock holds and waits" },
	{ "kbuild", "tick_ops", "100000", "a vCPU's vmstat tick every this many of its page operations (0: none)" },
	{ "alloc_many_free_few", "gig_probe", "all", "1 GiB ranges alloc_contig_range() tries after the run (all: every aligned range; 0: none)" },
	{ "exit_avalanche", "gig_probe", "all", "1 GiB ranges alloc_contig_range() tries after the run (all: every aligned range; 0: none)" },
	{ "kbuild", "gig_probe", "all", "1 GiB ranges alloc_contig_range() tries after the run (all: every aligned range; 0: none)" },
	{ "alloc_one_free_many", "design", "v6.18,pcp-owner", NULL },
	{ "alloc_one_free_many", "vcpus", "8,32,128", "comma-separated vCPU counts to sweep" },
	{ "alloc_one_free_many", "ops", "2000000", "page operations per run" },
	{ "alloc_one_free_many", "slice", "32", "operations a vCPU runs before the next one's turn" },
	{ "alloc_one_free_many", "exit_pages", "32768", "pages an exiting task frees (exit_avalanche)" },
	{ "alloc_one_free_many", "lock_stat", "1", "time lock holds and waits" },
	{ "alloc_one_free_many", "tick_ops", "100000", "a vCPU's vmstat tick every this many of its page operations (0: none)" },
	{ "alloc_one_free_many", "gig_probe", "all", "1 GiB ranges alloc_contig_range() tries after the run (all: every aligned range; 0: none)" },
	{ "hugetlb_1g", "design", "v6.18,pcp-owner", NULL },
	{ "hugetlb_1g", "vcpus", "8,32,128", "comma-separated vCPU counts to sweep" },
	{ "hugetlb_1g", "ops", "2000000", "page operations of churn before the 1 GiB tries" },
	{ "hugetlb_1g", "slice", "32", "operations a vCPU runs before the next one's turn" },
	{ "hugetlb_1g", "exit_pages", "32768", "pages an exiting task frees (exit_avalanche)" },
	{ "hugetlb_1g", "lock_stat", "1", "time lock holds and waits" },
	{ "hugetlb_1g", "tick_ops", "100000", "a vCPU's vmstat tick every this many of its page operations (0: none)" },
	{ "hugetlb_1g", "gig_probe", "all", "unused: hugetlb_1g tries every aligned 1 GiB range during its churn" },
	/* pagealloc_micro */
	{ "pagealloc_micro", "design", "v6.18,mt-counts", NULL },
	{ "pagealloc_micro", "order_min", "0", "lowest order measured" },
	{ "pagealloc_micro", "order_max", "4", "highest order measured" },
	{ "pagealloc_micro", "iterations", "10", "batches per order" },
	{ "pagealloc_micro", "plus1", "1", "allocate batch + 1 blocks and divide by batch, as mmtests does (0: divide by batch + 1)" },
	{ "pagealloc_micro", "monitor", "0", "also run with a thread reading /proc/pagetypeinfo (1 on)" },
	{ "pagealloc_micro", "monitor_ms", "10", "the reader's period in ms" },
	{ "pagealloc_micro", "churn", "0", "fragment the machine first (1 on)" },
	/* show */
	{ "show", "what", "buddyinfo", "comma-separated: buddyinfo, pagetypeinfo, zoneinfo, vmallocinfo" },
	{ "show", "workload", "fresh", "fresh (just booted) or churn (kernel-build-like)" },
	{ "show", "rounds", "max_pfn/8", "churn steps" },
	/* range_workload */
	{ "range_workload", "live", "10000,100000,1000000", "comma-separated numbers of live ranges" },
	{ "range_workload", "align", "1,512", "comma-separated alignments in pages" },
	{ "range_workload", "pairs", "200000", "alloc/free pairs per measurement" },
	{ "range_workload", "peers", "(none)", "comma-separated peer implementations (see scripts/build-peers.sh)" },
	{ "range_workload", "peer_timeout", "120", "seconds before a peer run is abandoned" },
	/* vmalloc_fix_size */
	{ "vmalloc_fix_size", "nr_pages", "1", "pages per vmalloc" },
	{ "vmalloc_fix_size", "use_huge", "0", "vmalloc_huge() instead of vmalloc() (1 on)" },
	{ "vmalloc_fix_size", "test_loop_count", "1000000", "vmalloc/vfree pairs per rep" },
	/* test_vmalloc */
	{ "test_vmalloc", "vcpus", "nr_threads", "vCPUs of the machine" },
	{ "test_vmalloc", "threads", "min(nr_threads, host CPUs)", "real threads running the workers" },
	{ "test_vmalloc", "slice", "64", "operations a worker runs before the next one's turn" },
	{ "test_vmalloc", "nr_threads", "1", "workers (test_vmalloc.ko's nr_threads)" },
	{ "test_vmalloc", "test_loop_count", "1000000", "iterations of each test" },
	{ "test_vmalloc", "test_repeat_count", "1", "repetitions of the whole run" },
	{ "test_vmalloc", "run_test_mask", "7", "bitmask of the tests to run (test_vmalloc.ko's)" },
	{ "test_vmalloc", "nr_pages", "0", "pages for fix_size_alloc_test (0: one page, the module's default)" },
	{ "test_vmalloc", "use_huge", "0", "vmalloc_huge() in fix_size_alloc_test (1 on)" },
	{ "test_vmalloc", "sequential_test_order", "0", "run the tests in mask order (1 on)" },
	{ "test_vmalloc", "nr_pcpu_objects", "35000", "objects of pcpu_alloc_test" },
	{ "test_vmalloc", "warmup", "0", "an untimed pass of every test with this test_loop_count first (0: none)" },
	{ "test_vmalloc", "template", "(none)", "test_vmalloc.sh's presets: performance, smoke or stress" },
	/* replay and trace_throughput */
	{ "replay", "trace", "(required)", "a trace artifact directory (manifest.json, before/, after/) or a trace file" },
	{ "replay", "state", "positional with a snapshot, else fresh", "starting state: fresh, counts or positional" },
	{ "replay", "snapshot", "the artifact's before/", "a /proc snapshot directory to load the state from" },
	{ "replay", "after", "the artifact's after/", "a /proc snapshot directory of the kernel's end state (end free pages, buddyinfo distance)" },
	{ "replay", "emit_trace", "(none)", "write pagelab's own trace of the replay here" },
	{ "replay", "show_state", "(none)", "append the machine's pagetypeinfo, buddyinfo and zoneinfo, as loaded and at the end, to this file" },
	{ "replay", "cpus", "the trace's CPUs", "vCPUs of the replaying machine" },
	{ "replay", "vmalloc", "1", "replay the vmap_area events too (0: page allocator only)" },
	{ "replay", "tick", "kernel", "when each vCPU's vmstat tick runs: kernel (four runs around the phase of the trace's kworker drains, ticking at those drains, or at 0/250/500/750 ms without any; the run nearest their median reported) or first (1 s after the first event)" },
	{ "replay", "pcp_busy", "1", "replay the frees the trace shows found their CPU's PCP lock held (a softirq's during a refill or drain) as the kernel ran them, straight to the buddy (0: to the PCP)" },
	{ "replay", "jobs", "the online CPUs", "replays (designs x tick probes) run at once, each in a process of its own, all from the one decoded event stream (1: one after another in this process)" },
	{ "replay", "tick_ms", "(none)", "every vCPU's vmstat tick this many ms (0..999) into each second of the trace clock, instead of tick=" },
	{ "trace_throughput", "trace", "(required)", "a trace file to parse and replay" },
	{ "trace_record", "instance", "(required)", "the ftrace instance directory whose per_cpu/cpuN/trace_pipe_raw are drained" },
	{ "trace_record", "out", "(required)", "the trace.dat to write" },
	{ "trace_record", "events", "(required)", "SYSTEM/EVENT,... whose format files go into the trace.dat" },
	{ "trace_record", "tracefs", "/sys/kernel/tracing", "where tracefs is mounted (header_page, formats, saved_cmdlines)" },
	{ "trace_record", "scratch", "(out's directory)", "where the per-CPU pages wait until the trace.dat is written (a tmpfs keeps disk writeback away from the workload)" },
	{ "trace_info", "trace", "(required)", "a trace file or artifact trace (trace.dat, or text)" },
	{ "trace_info", "command_pid", "(none)", "the recorded command's pid: its tasks and the ones the trace shows it forking are its share" },
	{ "trace_info", "tasks", "(none)", "pids, comms or \"command\", comma-separated: their share apart" },
	{ "trace_info", "top", "10", "tasks listed by name (the rest summed)" },
	{ "trace_convert", "trace", "(required)", "the trace to convert (trace.dat or text)" },
	{ "trace_convert", "out", "(required)", "the raw tracefs text to write" },
	{ "trace_throughput", "max_events", "all", "stop after this many events" },
	{ "trace_throughput", "pass", "all", "parse (text), decode (the binary event stream a replay reads), replay (from that stream) or all" },
	{ "trace_throughput", "reps", "1", "repetitions" },
	/* page_alloc_high_order */
	{ "page_alloc_high_order", "design", "v6.18,contig-batch", NULL },
	{ "page_alloc_high_order", "order", "3,9,10", "comma-separated orders" },
	{ "page_alloc_high_order", "test_loop_count", "100000", "alloc/free pairs per rep" },
	{ "page_alloc_high_order", "floor", "1", "also time the 2^order atomic refcount drops both designs pay, printed as the floor (0 off)" },
};

static const struct key_doc *find_doc(const char *suite, const char *key)
{
	const struct key_doc *any = NULL;

	for (size_t i = 0; i < ARRAY_SIZE(docs); i++) {
		if (strcmp(docs[i].key, key))
			continue;
		if (docs[i].suite && !strcmp(docs[i].suite, suite))
			return &docs[i];
		if (!docs[i].suite)
			any = &docs[i];
	}
	return any;
}

int bench_key_doc(const char *suite, const char *key, const char **def, const char **meaning)
{
	const struct key_doc *d = find_doc(suite, key), *any = NULL;

	if (!d)
		return -1;
	*def = d->def;
	*meaning = d->meaning;
	if (!*meaning) {	/* a suite's own default, the shared meaning */
		for (size_t i = 0; i < ARRAY_SIZE(docs); i++)
			if (!docs[i].suite && !strcmp(docs[i].key, key))
				any = &docs[i];
		*meaning = any ? any->meaning : "";
	}
	return 0;
}
