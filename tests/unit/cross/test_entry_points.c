// SPDX-License-Identifier: MIT
/*
 * test_entry_points.c - every public function of the trace, score, tick,
 * PCP-busy, positional, snapshot, replay, vtime, design and config APIs,
 * compaction and kcompactd, task tables and the decoded event stream,
 * called with NULL and out-of-range arguments, one table row each. Each
 * row runs in a child process, so that a crash fails that row by name
 * rather than the run; in the child the call must return its documented
 * refusal (NULL, -EINVAL, 0 or -1) and, where there is state, leave it as
 * it was. A void function must simply return.
 */
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
#include "helpers.h"
#include "pagelab/compaction.h"
#include "pagelab/evstream.h"
#include "pagelab/fault_inject.h"
#include "pagelab/pagelab.h"
#include "pagelab/replay.h"
#include "pagelab/snapshot.h"
#include "pagelab/trace.h"

static struct pl_machine *small_machine(void)
{
	return test_machine_cfg(32 * MiB, 16 * MiB, "v6.18", 0);
}

/* ---- the rows: each returns true when the call behaved ------------------ */

#define ROW(name) static bool name(void)

ROW(trace_open_null) { return !pl_trace_open(NULL) && !pl_trace_open(""); }
ROW(trace_open_mem_null) { return !pl_trace_open_mem(NULL, 10); }
ROW(trace_next_null)
{
	struct pl_trace_event ev;
	struct pl_trace_reader *r = pl_trace_open_mem("x", 1);
	bool ok = pl_trace_next(NULL, &ev) == -EINVAL && pl_trace_next(r, NULL) == -EINVAL;

	pl_trace_close(r);
	return ok;
}
ROW(trace_stats_null) { return !pl_trace_get_stats(NULL); }
ROW(trace_close_null) { pl_trace_close(NULL); return true; }
ROW(trace_parse_line_null)
{
	struct pl_trace_event ev;

	return pl_trace_parse_line(NULL, 5, &ev, NULL) == -1 &&
	       pl_trace_parse_line("  a-1 [0] 1.0: mm_page_free: pfn=1 order=0", 40, NULL, NULL) == -1;
}
ROW(score_null)
{
	struct pl_trace_score *s = calloc(1, sizeof(*s));
	struct pl_trace_event ev = { .type = PL_TRACE_PAGE_FREE, .cpu = 4000000, .order = 99 };
	bool ok;

	pl_trace_score_init(NULL);
	pl_trace_score_event(NULL, &ev);
	pl_trace_score_event(s, NULL);
	pl_trace_score_init(s);
	pl_trace_score_event(s, &ev);		/* an order past MAX_PAGE_ORDER: ignored */
	ev.type = (enum pl_trace_type)77;
	pl_trace_score_event(s, &ev);		/* no such type: ignored */
	ok = !s->frees && !s->free_pages && pl_trace_score_zone_lock(NULL) == 0;
	free(s);
	return ok;
}
ROW(tp_and_print_null)
{
	struct pl_trace_event ev = { .type = (enum pl_trace_type)77 };

	pl_tp_to_trace_event(NULL, 0, &ev);
	pl_tp_to_trace_event(NULL, 0, NULL);
	pl_trace_print_event(NULL, &ev);
	pl_trace_print_event(stderr, NULL);
	pl_trace_print_event(stderr, &ev);	/* no such type: nothing printed */
	return true;
}
ROW(snapshot_null)
{
	struct pl_snapshot *s = calloc(1, sizeof(*s));
	unsigned long out[NR_PAGE_ORDERS];
	struct pl_snapshot_gap g;
	struct pl_config cfg;
	bool ok = pl_snapshot_read(NULL, s) == -EINVAL && pl_snapshot_read("/tmp", NULL) == -EINVAL &&
		  pl_snapshot_nr_cpus(NULL) == 0 &&
		  pl_snapshot_gap(NULL, s, NULL, &g) == -EINVAL;

	pl_snapshot_free_by_order(NULL, out);
	pl_snapshot_free_by_order(s, NULL);
	pl_config_default(&cfg);
	s->nr_zones = 99;			/* out of range: ignored */
	pl_snapshot_config(s, &cfg);
	ok = ok && pl_snapshot_nr_cpus(s) == 0;
	pl_snapshot_config(NULL, &cfg);
	pl_snapshot_config(s, NULL);
	free(s);
	return ok;
}
ROW(state_level_null) { return pl_state_level_parse(NULL) == -EINVAL && pl_state_level_parse("x") == -EINVAL; }
ROW(load_state_null)
{
	struct pl_machine *m = small_machine();
	struct pl_snapshot *s = calloc(1, sizeof(*s));
	struct pl_positional pos = { 0 };
	bool ok;

	s->nr_zones = 99;
	ok = !pl_machine_load_state(NULL, s) && !pl_machine_load_state(m, NULL) &&
	     !pl_machine_load_state(m, s) && !pl_machine_load_positional(m, NULL, &pos) &&
	     !pl_machine_load_positional(m, s, NULL) && pl_check_machine(m) == 0;
	free(s);
	pl_machine_destroy(m);
	return ok;
}
ROW(state_handle_null)
{
	const unsigned long *pfn;
	const unsigned char *order;
	const unsigned short *cpu;

	pl_state_release(NULL);
	return !pl_state_take(NULL, 0, 0) && !pl_state_onlining(NULL, 0, MAX_PAGE_ORDER) &&
	       pl_state_pretrace(NULL, &pfn, &order) == 0 &&
	       pl_state_pcp_sighted(NULL, &pfn, &cpu) == 0;
}
ROW(tick_null)
{
	struct pl_tick_phase tp = { 0 };
	struct pl_trace_event ev = { .type = PL_TRACE_PCPU_DRAIN, .cpu = 5000000, .kworker = true };
	const uint64_t *starts;
	bool ok = pl_tick_phase_event(NULL, &ev) == -EINVAL && pl_tick_phase_event(&tp, NULL) == -EINVAL &&
		  pl_tick_phase_event(&tp, &ev) == 0 &&		/* no such CPU: ignored */
		  pl_tick_phase_ns(NULL, 0) == -1 && pl_tick_phase_ns(&tp, 4000000) == -1 &&
		  pl_tick_phase_runs(NULL, 0, &starts) == 0 && pl_tick_phase_runs(&tp, 9, NULL) == 0 &&
		  pl_tick_medoid(NULL, 1) == -EINVAL;

	pl_tick_phase_release(NULL);
	pl_tick_phase_release(&tp);
	return ok;
}
ROW(pcp_busy_null)
{
	struct pl_trace_event ev = { .type = PL_TRACE_PAGE_FREE };

	pl_pcp_busy_finish(NULL);
	pl_pcp_busy_release(NULL);
	return pl_pcp_busy_event(NULL, &ev) == -EINVAL && !pl_pcp_busy_has(NULL, 1);
}
ROW(positional_null)
{
	struct pl_positional *pos = calloc(1, sizeof(*pos));
	struct pl_trace_event ev = { .type = PL_TRACE_PAGE_ALLOC, .cpu = 9000000, .order = 0,
				     .pfn = PL_TRACE_PFN_LIMIT - 1 };
	int count[2] = { 1, 1 }, batch[2] = { 1, 1 };
	struct pl_config cfg;
	bool ok = pl_positional_event(NULL, &ev) == -EINVAL && pl_positional_event(pos, NULL) == -EINVAL &&
		  pl_positional_event(pos, &ev) == 0 && pos->seen_words == 0 &&
		  pl_positional_pcp_owners(NULL, 0, 10, count, batch, 2, NULL) == 0 &&
		  pl_positional_pcp_owners(pos, 0, 10, NULL, batch, 2, NULL) == 0;

	pl_config_default(&cfg);
	pl_snapshot_config_positional(NULL, pos, &cfg);
	pl_positional_release(NULL);
	pl_positional_release(pos);
	free(pos);
	return ok;
}
ROW(replay_null)
{
	struct pl_machine *m = small_machine();
	struct pl_replay *r = pl_replay_create(m, NULL);
	struct pl_trace_event ev = { .type = PL_TRACE_PAGE_ALLOC, .cpu = 4000000, .order = 0 };
	uint64_t times[2] = { 5, 1 };
	bool ok = r && !pl_replay_create(NULL, NULL) &&
		  pl_replay_event(NULL, &ev) == -EINVAL && pl_replay_event(r, NULL) == -EINVAL &&
		  pl_replay_event(r, &ev) > 0 &&		/* no such vCPU: a counted warning */
		  pl_replay_set_tick_phase(NULL, 0, 0) == -EINVAL &&
		  pl_replay_set_tick_phase(r, 99, 0) == -EINVAL &&
		  pl_replay_set_tick_phase(r, 0, -5) == -EINVAL &&
		  pl_replay_set_tick_times(NULL, 0, times, 1) == -EINVAL &&
		  pl_replay_set_tick_times(r, 0, times, 2) == -EINVAL &&
		  pl_replay_set_tick_times(r, 0, NULL, 2) == -EINVAL &&
		  !pl_replay_score(NULL) && !pl_replay_warnings(NULL);

	ev.order = 99;
	ev.cpu = 0;
	ok = ok && pl_replay_event(r, &ev) == -EINVAL;	/* an order past MAX_PAGE_ORDER */
	ev.order = 0;
	ev.type = (enum pl_trace_type)77;
	ok = ok && pl_replay_event(r, &ev) == -EINVAL;	/* no such type */
	pl_replay_set_emit(NULL, stderr);
	pl_replay_set_pfn_limit(NULL, 5);
	pl_replay_set_pcp_busy(NULL, NULL);
	pl_replay_set_timeline(NULL, NULL, NULL);
	pl_replay_destroy(NULL, true);
	pl_replay_destroy(r, true);
	pl_free_pages_by_order(NULL, NULL);
	ok = ok && pl_check_machine(m) == 0;
	pl_machine_destroy(m);
	return ok;
}
ROW(vtime_null)
{
	struct pl_vt_params p;
	struct pl_vt_snap snap;

	pl_vt_params_default(NULL);
	pl_vt_params_costs(NULL, 0);
	pl_vt_params_default(&p);
	pl_vt_params_costs(&p, 999999);			/* no such set: unchanged */
	pl_vtime_destroy(NULL);
	pl_vt_snapshot(NULL, &snap);
	pl_vt_sync(NULL);
	return pl_vt_costs_parse(NULL) == -1 && pl_vt_params_override(NULL, "x=1") == -EINVAL &&
	       pl_vt_params_override(&p, NULL) == -EINVAL && !pl_vtime_create(0, NULL, NULL) &&
	       !pl_vtime_create(1u << 30, NULL, NULL) && pl_vt_pick(NULL, NULL, 0) == 0;
}
ROW(design_config_null)
{
	struct pl_design d;
	struct pl_config *cfg = pl_config_new();
	char err[64], buf[8];
	bool ok = pl_design_preset(NULL, &d) == -EINVAL && pl_design_preset("v6.18", NULL) == -EINVAL &&
		  pl_design_parse(NULL, &d, err, sizeof(err)) == -EINVAL &&
		  pl_design_parse("v6.18", NULL, err, sizeof(err)) == -EINVAL &&
		  pl_design_parse("v6.18+nope", &d, NULL, 0) == -EINVAL &&
		  pl_design_format(NULL, buf, sizeof(buf)) < 0 &&
		  pl_design_switch_get(NULL, NULL) == -EINVAL &&
		  !pl_design_switch_find(NULL, 5) &&
		  pl_config_set(NULL, "mem", "1G", err, sizeof(err)) == -EINVAL &&
		  pl_config_set(cfg, NULL, "1G", err, sizeof(err)) == -EINVAL &&
		  pl_config_set(cfg, "mem", NULL, err, sizeof(err)) == -EINVAL &&
		  pl_config_set(cfg, "vcpus", "4294967297", NULL, 0) == -EINVAL &&
		  pl_config_set(cfg, "mem", "99999999999999999999G", err, sizeof(err)) == -EINVAL;

	pl_config_default(NULL);
	pl_config_free(NULL);
	pl_config_free(cfg);
	return ok;
}

/* A machine's buddyinfo as text, to see that a refused call changed nothing. */
static long report(struct pl_machine *m, char *buf, size_t size)
{
	return pl_show_buddyinfo(m, buf, size);
}

ROW(compaction_null)
{
	struct pl_machine *m = small_machine();
	static const struct pl_migrate_ops half = { 0 };	/* no callbacks */
	char before[4096], after[4096], buf[64];
	long n = report(m, before, sizeof(before));
	bool ok = pl_set_migrate_ops(NULL, NULL, NULL) == -EINVAL &&
		  pl_set_migrate_ops(m, &half, NULL) == -EINVAL &&
		  pl_compact_zone(NULL, 0, 0, true) == -EINVAL &&
		  pl_compact_zone(m, -1, 0, true) == -EINVAL &&
		  pl_compact_zone(m, MAX_NR_ZONES, 0, true) == -EINVAL &&
		  pl_compact_zone(m, ZONE_NORMAL, -2, true) == -EINVAL &&
		  pl_compact_zone(m, ZONE_NORMAL, MAX_PAGE_ORDER + 1, false) == -EINVAL &&
		  pl_show_extfrag_index(NULL, buf, sizeof(buf)) == -EINVAL &&
		  pl_show_extfrag_index(m, NULL, sizeof(buf)) == -EINVAL &&
		  pl_show_unusable_index(NULL, buf, sizeof(buf)) == -EINVAL &&
		  pl_show_unusable_index(m, NULL, sizeof(buf)) == -EINVAL &&
		  pl_show_extfrag_index_file(NULL, stderr) == -EINVAL &&
		  pl_show_extfrag_index_file(m, NULL) == -EINVAL &&
		  pl_show_unusable_index_file(NULL, stderr) == -EINVAL &&
		  pl_show_unusable_index_file(m, NULL) == -EINVAL &&
		  pl_extfrag_threshold(NULL) == 0;

	reset_isolation_suitable(NULL);
	ok = ok && n > 0 && report(m, after, sizeof(after)) == n && !memcmp(before, after, n) &&
	     pl_check_machine(m) == 0;
	pl_machine_destroy(m);
	return ok;
}
ROW(kcompactd_null)
{
	struct pl_machine *m = small_machine();
	char before[4096], after[4096];
	long n = report(m, before, sizeof(before));
	bool ok = pl_compaction_proactiveness(NULL) == 0 && fragmentation_score_node(NULL) == 0 &&
		  fragmentation_score_wmark(NULL, true) == 0;

	wakeup_kcompactd(NULL, 3, ZONE_NORMAL);
	wakeup_kcompactd(m, MAX_PAGE_ORDER + 5, ZONE_NORMAL);
	wakeup_kcompactd(m, 3, -1);
	wakeup_kcompactd(m, 3, MAX_NR_ZONES + 2);
	pl_kcompactd_run(NULL, 1);
	pl_kcompactd_tick(NULL);
	pl_kcompactd_set_traced(NULL, true);
	pl_kcompactd_traced_wake(NULL, 3, 1);
	pl_kcompactd_traced_wake(m, MAX_PAGE_ORDER + 5, 1);
	ok = ok && n > 0 && report(m, after, sizeof(after)) == n && !memcmp(before, after, n) &&
	     pl_check_machine(m) == 0;
	pl_machine_destroy(m);
	return ok;
}
ROW(trace_tasks_null)
{
	struct pl_task_table tt = { 0 };
	struct pl_trace_event ev = { .type = PL_TRACE_PAGE_FREE, .pid = 5 };
	struct pl_trace_reader *r = pl_trace_open_mem("x", 1);
	struct pl_trace_score *s = calloc(1, sizeof(*s));
	bool ok = r && s && pl_task_table_event(NULL, &ev) == -EINVAL &&
		  pl_task_table_event(&tt, NULL) == -EINVAL && tt.nr == 0 &&
		  !pl_task_match(NULL, &ev) && !pl_task_match("5", NULL) &&
		  pl_trace_set_command_pid(NULL, 5) == -EINVAL &&
		  pl_trace_set_command_pid(r, 0) == -EINVAL &&
		  pl_trace_set_command_pid(r, -7) == -EINVAL && pl_trace_open_error() != NULL;

	pl_task_table_sort(NULL);
	pl_task_table_release(NULL);
	pl_task_table_release(&tt);
	pl_trace_score_pressure_finish(NULL);
	pl_trace_close(r);
	free(s);
	return ok;
}
ROW(evstream_null)
{
	struct pl_evstream *s = pl_evstream_create(NULL);
	struct pl_trace_event ev = { .type = PL_TRACE_PAGE_FREE };
	bool ok = s && pl_evstream_append(NULL, &ev) == -EINVAL &&
		  pl_evstream_append(s, NULL) == -EINVAL && pl_evstream_events(s) == 0 &&
		  !pl_evstream_open(NULL) && !pl_evstream_open(s) &&	/* not finished */
		  pl_evstream_finish(NULL) == -EINVAL && pl_evstream_events(NULL) == 0 &&
		  pl_evstream_bytes(NULL) == 0 && pl_evstream_next(NULL, &ev) == -EINVAL;
	struct pl_evstream_reader *rd;

	ok = ok && pl_evstream_finish(s) == 0 &&
	     pl_evstream_append(s, &ev) == -EINVAL && pl_evstream_events(s) == 0;
	rd = pl_evstream_open(s);
	ok = ok && rd && pl_evstream_next(rd, NULL) == -EINVAL && pl_evstream_next(rd, &ev) == 0;
	pl_evstream_close(NULL);
	pl_evstream_close(rd);
	pl_evstream_destroy(NULL);
	pl_evstream_destroy(s);
	return ok;
}

ROW(kswapd_state_pcp_null)
{
	struct pl_machine *m = small_machine();
	char before[4096], after[4096];
	long n = report(m, before, sizeof(before));
	struct pl_fault_attr attr = { 0 };
	bool ok = pl_page_pfn(NULL) == -1UL && pl_zone_set_managed(NULL, 5) == -EINVAL &&
		  pl_pcp_set_high_batch(NULL, 0, 1, 1) == -EINVAL && pl_pcp_design_batch(NULL) == 0 &&
		  pl_fault_attr_parse(NULL, "1") == -EINVAL && pl_fault_attr_parse(&attr, NULL) == -EINVAL;

	pl_kswapd_begin(NULL);
	pl_kswapd_end(NULL);
	pl_kswapd_run(NULL);
	pl_state_moved(NULL, 1, 2);
	pl_churn_release(NULL);
	ok = ok && n > 0 && report(m, after, sizeof(after)) == n && !memcmp(before, after, n) &&
	     pl_check_machine(m) == 0;
	pl_machine_destroy(m);
	return ok;
}

static const struct {
	const char *name;
	bool (*fn)(void);
} rows[] = {
#define R(f) { #f, f }
	R(trace_open_null), R(trace_open_mem_null), R(trace_next_null), R(trace_stats_null),
	R(trace_close_null), R(trace_parse_line_null), R(score_null), R(tp_and_print_null),
	R(snapshot_null), R(state_level_null), R(load_state_null), R(state_handle_null),
	R(tick_null), R(pcp_busy_null), R(positional_null), R(replay_null), R(vtime_null),
	R(design_config_null), R(compaction_null), R(kcompactd_null), R(trace_tasks_null),
	R(evstream_null), R(kswapd_state_pcp_null),
#undef R
};

static void test_every_entry_point(void **state)
{
	int failed = 0;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		pid_t pid = fork();
		int status;

		assert_true(pid >= 0);
		if (!pid) {
			/* cmocka's own handlers would turn a crash into its failure */
			signal(SIGSEGV, SIG_DFL);
			signal(SIGBUS, SIG_DFL);
			signal(SIGFPE, SIG_DFL);
			signal(SIGABRT, SIG_DFL);
			signal(SIGILL, SIG_DFL);
			pl_warn_set_quiet(true);
			_exit(rows[i].fn() ? 0 : 3);
		}
		assert_int_equal(waitpid(pid, &status, 0), pid);
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			fprintf(stderr, "entry points: %s: %s\n", rows[i].name,
				WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "wrong result");
			failed++;
		}
	}
	assert_int_equal(failed, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_entry_point),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
