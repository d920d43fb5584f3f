/* SPDX-License-Identifier: MIT */
/*
 * seq.h - the pl_show_*() reports' writers over a struct pl_seq (base.h):
 * the kernel's seq_puts()/seq_putc() and the printf widths its /proc files
 * use, by hand. Inline: a report of a few hundred numbers (pagetypeinfo
 * with mt_counts) would otherwise spend its time in calls and printf.
 *
 * Invariant: one byte of a caller's buffer is kept for the NUL that
 * pl_seq_finish() writes; with no buffer (measuring) only the count grows.
 */
#ifndef PAGELAB_BASE_SEQ_H
#define PAGELAB_BASE_SEQ_H

#include <string.h>
#include "pagelab/base.h"

static inline void seq_write(struct pl_seq *s, const char *p, size_t n)
{
	size_t room;

	if (!s->buf) {
		s->count += n;
		return;
	}
	room = s->size ? s->size - 1 - s->count : 0;
	if (n > room) {
		s->overflow = true;
		n = room;
	}
	memcpy(s->buf + s->count, p, n);
	s->count += n;
}

static inline void seq_puts(struct pl_seq *s, const char *str) { seq_write(s, str, strlen(str)); }
static inline void seq_putc(struct pl_seq *s, char c) { seq_write(s, &c, 1); }

static inline void seq_pad(struct pl_seq *s, size_t n)
{
	static const char spaces[] = "                                            ";

	while (n) {
		size_t k = n < sizeof(spaces) - 1 ? n : sizeof(spaces) - 1;

		seq_write(s, spaces, k);
		n -= k;
	}
}

/* printf("%*s") for width > 0, printf("%-*s") for width < 0. */
static inline void seq_put_str(struct pl_seq *s, const char *str, int width)
{
	size_t len = strlen(str), w = (size_t)(width < 0 ? -width : width);

	if (width > 0 && len < w)
		seq_pad(s, w - len);
	seq_write(s, str, len);
	if (width < 0 && len < w)
		seq_pad(s, w - len);
}

/* printf("%*lu"), with an optional prefix counted inside the width. */
static inline void seq_put_num(struct pl_seq *s, const char *prefix, unsigned long v, int width)
{
	char tmp[32];
	int n = 0;

	do {
		tmp[sizeof(tmp) - 1 - n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	if (prefix)
		seq_puts(s, prefix);
	if (n < width)
		seq_pad(s, (size_t)(width - n));
	seq_write(s, tmp + sizeof(tmp) - n, (size_t)n);
}

#endif /* PAGELAB_BASE_SEQ_H */
