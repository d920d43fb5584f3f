// SPDX-License-Identifier: MIT
/*
 * test_evcache.c - the decoded-stream cache (evcache.h) and the full-mode
 * stream under it: a real trace with memory-pressure events comes back
 * from a full-mode stream field for field, pressure fields and pid too; an
 * entry stored is loaded with its statistics and events; a stale key, a
 * cut, an extended, a corrupted or another format's file is a miss that
 * says why, never a stream; the cache trims to its limit, entries used
 * longest ago first, and refuses an entry larger than the limit.
 */
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include "helpers.h"
#include "pagelab/evcache.h"
#include "trace_fixtures.h"

static bool same_full(const struct pl_trace_event *a, const struct pl_trace_event *b)
{
	bool pressure = a->type >= PL_TRACE_PRESSURE_FIRST && a->type != PL_TRACE_KCOMPACTD_WAKE;

	if (a->type != b->type || a->cpu != b->cpu || a->ts_ns != b->ts_ns || a->line != b->line ||
	    a->pfn != b->pfn || a->order != b->order || a->migratetype != b->migratetype ||
	    a->gfp != b->gfp || a->kworker != b->kworker || a->kswapd != b->kswapd ||
	    a->nr_lazy != b->nr_lazy || a->va_start != b->va_start || a->size != b->size)
		return false;
	if (!pressure)
		return true;
	return a->start_pfn == b->start_pfn && a->end_pfn == b->end_pfn &&
	       a->nr_scanned == b->nr_scanned && a->nr_taken == b->nr_taken &&
	       a->migrate_pfn == b->migrate_pfn && a->free_pfn == b->free_pfn &&
	       a->zone_start == b->zone_start && a->zone_end == b->zone_end &&
	       a->sync == b->sync && a->status == b->status && a->priority == b->priority &&
	       a->reason == b->reason && a->order_failed == b->order_failed &&
	       a->considered == b->considered && a->defer_limit == b->defer_limit &&
	       a->nr_succeeded == b->nr_succeeded && a->nr_failed == b->nr_failed &&
	       a->nr_reclaimed == b->nr_reclaimed && a->pid == b->pid;
}

/* The fixture's events into a full-mode stream; its parser statistics into *@st. */
static struct pl_evstream *full_of(const char *name, struct pl_trace_stats *st)
{
	struct pl_trace_reader *r = pl_trace_open(fixture_path(name));
	struct pl_evstream *s = pl_evstream_create_full(NULL);
	struct pl_trace_event ev;

	assert_non_null(r);
	assert_non_null(s);
	while (pl_trace_next(r, &ev) > 0)
		assert_int_equal(pl_evstream_append(s, &ev), 0);
	*st = *pl_trace_get_stats(r);
	pl_trace_close(r);
	assert_int_equal(pl_evstream_finish(s), 0);
	return s;
}

/* @s's events against the fixture's, field for field. Return: how many pressure events. */
static unsigned long check_events(const char *name, const struct pl_evstream *s)
{
	struct pl_trace_reader *r = pl_trace_open(fixture_path(name));
	struct pl_evstream_reader *rd = pl_evstream_open(s);
	struct pl_trace_event ev, back;
	unsigned long pressure = 0;

	assert_non_null(r);
	assert_non_null(rd);
	while (pl_trace_next(r, &ev) > 0) {
		assert_int_equal(pl_evstream_next(rd, &back), 1);
		assert_true(same_full(&ev, &back));
		pressure += ev.type >= PL_TRACE_PRESSURE_FIRST;
	}
	assert_int_equal(pl_evstream_next(rd, &back), 0);
	pl_evstream_close(rd);
	pl_trace_close(r);
	return pressure;
}

static void test_full_mode_round_trip(void **state)
{
	struct pl_trace_stats st;
	struct pl_evstream *s = full_of("pressure-ftrace-6.18.txt", &st);

	(void)state;
	assert_int_equal(pl_evstream_events(s), st.events);
	assert_true(check_events("pressure-ftrace-6.18.txt", s) > 0);
	pl_evstream_destroy(s);
}

static char dir[4096];

static int dir_setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "%s/pagelab-evcache-test-XXXXXX", getenv("TMPDIR") ?: "/tmp");
	return mkdtemp(dir) ? 0 : -1;
}

static int dir_teardown(void **state)
{
	char cmd[4200];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* The one entry file in dir. */
static void entry_file(char *out, size_t len)
{
	char cmd[4200];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "ls '%s'/*.plevc", dir);
	p = popen(cmd, "r");
	assert_non_null(p);
	assert_non_null(fgets(out, (int)len, p));
	out[strcspn(out, "\n")] = 0;
	pclose(p);
}

static void expect_miss(const struct pl_evcache_key *key, const char *why_part)
{
	struct pl_trace_stats st;
	const char *why;

	assert_null(pl_evcache_load(dir, key, &st, &why));
	assert_non_null(strstr(why, why_part));
}

static void test_store_load_and_bad_entries(void **state)
{
	const char *name = "pressure-ftrace-6.18.txt";
	struct pl_trace_stats st, got;
	struct pl_evcache_key key, other;
	struct pl_evstream *s = full_of(name, &st), *hit;
	char path[4096];
	struct stat sb;
	const char *why;
	int fd;
	unsigned char byte;

	(void)state;
	assert_int_equal(pl_evcache_key(fixture_path(name), &key), 0);
	assert_int_equal(pl_evcache_key(fixture_path(name), &other), 0);
	assert_memory_equal(&key, &other, sizeof(key));	/* the same content, the same key */
	assert_true(key.size > 0);
	assert_int_equal(pl_evcache_load(dir, &key, &got, &why), NULL);
	assert_string_equal(why, "");			/* a plain miss */
	assert_int_equal(pl_evcache_store(dir, &key, s, &st, 1ull << 30), 0);
	pl_evstream_destroy(s);

	hit = pl_evcache_load(dir, &key, &got, &why);
	assert_non_null(hit);
	assert_memory_equal(&got, &st, sizeof(st));
	assert_true(check_events(name, hit) > 0);
	pl_evstream_destroy(hit);

	/* another content (a stale entry for it would be another file): a plain miss */
	other.hash[0] ^= 1;
	assert_null(pl_evcache_load(dir, &other, &got, &why));
	assert_string_equal(why, "");

	entry_file(path, sizeof(path));
	assert_int_equal(stat(path, &sb), 0);
	/* cut by one byte, then extended by one: the header's size is not the file's */
	assert_int_equal(truncate(path, sb.st_size - 1), 0);
	expect_miss(&key, "size differs");
	fd = open(path, O_WRONLY | O_APPEND);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "xy", 2), 2);
	close(fd);
	expect_miss(&key, "size differs");
	assert_int_equal(truncate(path, sb.st_size), 0);
	/* one byte of the stream changed (the size is right): its checksum */
	fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &byte, 1, sb.st_size - 3), 1);
	byte ^= 0x20;
	assert_int_equal(pwrite(fd, &byte, 1, sb.st_size - 3), 1);
	close(fd);
	expect_miss(&key, "stream checksum");
	/* a header byte (the event count) changed: the header's checksum */
	fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &byte, 1, 48), 1);
	byte ^= 0x01;
	assert_int_equal(pwrite(fd, &byte, 1, 48), 1);
	close(fd);
	expect_miss(&key, "header checksum");
	/* another format (the magic) */
	fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, "X", 1, 0), 1);
	close(fd);
	expect_miss(&key, "another format");
	/* shorter than a header */
	assert_int_equal(truncate(path, 10), 0);
	expect_miss(&key, "shorter than its header");
	/* a store over a bad entry replaces it */
	s = full_of(name, &st);
	assert_int_equal(pl_evcache_store(dir, &key, s, &st, 1ull << 30), 0);
	pl_evstream_destroy(s);
	hit = pl_evcache_load(dir, &key, &got, &why);
	assert_non_null(hit);
	pl_evstream_destroy(hit);
}

static void test_trim(void **state)
{
	static const char *const names[] = { "ftrace-6.18.txt", "perf-script-6.18.txt",
					      "trace-cmd-report-6.18.txt" };
	struct pl_evcache_key keys[3];
	struct pl_trace_stats st[3], got;
	struct pl_evstream *s[3], *h;
	uint64_t header;
	char path[4096];
	struct stat sb;
	const char *why;

	(void)state;
	for (int i = 0; i < 3; i++) {
		s[i] = full_of(names[i], &st[i]);
		assert_int_equal(pl_evcache_key(fixture_path(names[i]), &keys[i]), 0);
	}
	assert_int_equal(pl_evcache_store(dir, &keys[0], s[0], &st[0], 1ull << 30), 0);
	entry_file(path, sizeof(path));
	assert_int_equal(stat(path, &sb), 0);
	header = (uint64_t)sb.st_size - pl_evstream_bytes(s[0]);
	sleep(1);
	assert_int_equal(pl_evcache_store(dir, &keys[1], s[1], &st[1], 1ull << 30), 0);
	sleep(1);
	h = pl_evcache_load(dir, &keys[0], &got, &why);	/* the first is used again */
	assert_non_null(h);
	pl_evstream_destroy(h);
	sleep(1);
	/* a limit that holds the first and the third, not all three */
	assert_int_equal(pl_evcache_store(dir, &keys[2], s[2], &st[2],
					  2 * header + pl_evstream_bytes(s[0]) +
					  pl_evstream_bytes(s[2])), 0);
	/* the second, used longest ago, went */
	assert_null(pl_evcache_load(dir, &keys[1], &got, &why));
	assert_string_equal(why, "");
	for (int i = 0; i < 3; i += 2) {
		h = pl_evcache_load(dir, &keys[i], &got, &why);
		assert_non_null(h);
		assert_memory_equal(&got, &st[i], sizeof(got));
		pl_evstream_destroy(h);
	}
	/* an entry larger than the limit alone is not written */
	assert_int_equal(pl_evcache_store(dir, &keys[1], s[1], &st[1], 100), -EFBIG);
	assert_null(pl_evcache_load(dir, &keys[1], &got, &why));
	for (int i = 0; i < 3; i++)
		pl_evstream_destroy(s[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_mode_round_trip),
		cmocka_unit_test_setup_teardown(test_store_load_and_bad_entries, dir_setup,
						dir_teardown),
		cmocka_unit_test_setup_teardown(test_trim, dir_setup, dir_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
