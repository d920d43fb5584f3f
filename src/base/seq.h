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

/* seq_num_digits() - how many decimal digits @v has (1..20). */
static inline int seq_num_digits(unsigned long v)
{
	static const unsigned long pow10[] = {
		10UL, 100UL, 1000UL, 10000UL, 100000UL, 1000000UL, 10000000UL, 100000000UL,
		1000000000UL, 10000000000UL, 100000000000UL, 1000000000000UL,
		10000000000000UL, 100000000000000UL, 1000000000000000UL,
		10000000000000000UL, 100000000000000000UL, 1000000000000000000UL,
		10000000000000000000UL,
	};
	int n = 1;

	while (n < 20 && v >= pow10[n - 1])
		n++;
	return n;
}

/*
 * printf("%*lu"), with an optional prefix written before the padding (the
 * padding counts the digits only). The usual case, a number of at most 16
 * columns with 16 bytes of room, is written in place: 16 spaces, then the
 * digits from the right (the spaces past the number are inside the room
 * and overwritten by what follows, or past the report's end).
 */
static inline void seq_put_num(struct pl_seq *s, const char *prefix, unsigned long v, int width)
{
	int n = seq_num_digits(v);
	size_t pad = n < width ? (size_t)(width - n) : 0;
	char tmp[20], *p;

	if (!prefix && s->buf && pad + (size_t)n <= 16 && s->count + 16 < s->size) {
		p = s->buf + s->count;
		memset(p, ' ', 16);
		s->count += pad + (size_t)n;
		p = s->buf + s->count;
		do {
			*--p = (char)('0' + v % 10);
			v /= 10;
		} while (v);
		return;
	}
	p = tmp + sizeof(tmp);
	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	if (prefix)
		seq_puts(s, prefix);
	if (pad)
		seq_pad(s, pad);
	seq_write(s, p, (size_t)n);
}

#endif /* PAGELAB_BASE_SEQ_H */
