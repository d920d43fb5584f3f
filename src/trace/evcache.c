// SPDX-License-Identifier: MIT
/*
 * evcache.c - the decoded-stream cache of evcache.h: one file per trace
 * content, "<hash>-<size>.plevc" in the cache directory, holding a fixed
 * header (magic, format, key, sizes, the parser's statistics, checksums)
 * and then the full-mode event stream.
 *
 * Invariants: see evcache.h. Memory is one fixed block buffer whatever the
 * trace's or the entry's size; every size read from a file is checked
 * against the file's real size before it is used.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "pagelab/evcache.h"

#define EVC_MAGIC	"PLEVCACH"
#define EVC_BLOCK	(1u << 20)
#define EVC_SUFFIX	".plevc"
#define EVC_MAX_ENTRIES	4096	/* entries one trim looks at */

struct evc_header {
	char magic[8];
	uint32_t version, stats_size;
	struct pl_evcache_key key;
	uint64_t stream_bytes, events, stream_sum;
	struct pl_trace_stats stats;
	uint64_t header_sum;		/* of everything above */
};

/* ---- hashing: 8-byte words through a multiply-rotate, each block folded in -------- */

static inline uint64_t rotl(uint64_t x, unsigned int r)
{
	return (x << r) | (x >> (64 - r));
}

static inline uint64_t fmix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	return h ^ (h >> 33);
}

/* Two independent 64-bit lanes over @n bytes at @p, continuing @h. */
static void hash_block(uint64_t h[2], const unsigned char *p, size_t n)
{
	uint64_t a = h[0] ^ n, b = h[1] + n;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint64_t w;

		memcpy(&w, p + i, 8);
		a = rotl(a ^ (w * 0x87c37b91114253d5ULL), 31) * 0x4cf5ad432745937fULL;
		b = rotl(b + (w * 0x9e3779b97f4a7c15ULL), 27) * 0xbf58476d1ce4e5b9ULL;
	}
	for (; i < n; i++) {
		a = (a ^ p[i]) * 0x100000001b3ULL;
		b = rotl(b + p[i], 5) * 0x94d049bb133111ebULL;
	}
	h[0] = fmix(a);
	h[1] = fmix(b ^ h[0]);
}

/* Read up to @len bytes at @off, as many as the file has. Return: bytes, or -errno. */
static ssize_t pread_full(int fd, void *buf, size_t len, uint64_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pread(fd, (char *)buf + done, len - done, (off_t)(off + done));

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (!n)
			break;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

int pl_evcache_key(const char *path, struct pl_evcache_key *key)
{
	unsigned char *buf = malloc(EVC_BLOCK);
	uint64_t h[2] = { 0x243f6a8885a308d3ULL, 0x13198a2e03707344ULL }, off = 0;
	struct stat st;
	int fd, err = 0;

	if (!buf)
		return -ENOMEM;
	/* Non-blocking: a FIFO is refused here, not waited on; only a regular file is hashed. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		free(buf);
		return -errno;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		free(buf);
		return -EINVAL;
	}
	for (;;) {
		ssize_t n = pread_full(fd, buf, EVC_BLOCK, off);

		if (n < 0) {
			err = (int)n;
			break;
		}
		if (!n)
			break;
		hash_block(h, buf, (size_t)n);
		off += (uint64_t)n;
	}
	close(fd);
	free(buf);
	if (err)
		return err;
	key->hash[0] = h[0];
	key->hash[1] = h[1];
	key->size = off;
	return 0;
}

const char *pl_evcache_dir(char *buf, size_t len)
{
	const char *env = getenv("PAGELAB_CACHE_DIR"), *base;
	int n;

	if (env && *env)
		n = snprintf(buf, len, "%s", env);
	else if ((base = getenv("XDG_CACHE_HOME")) && *base == '/')
		n = snprintf(buf, len, "%s/pagelab/evstream", base);
	else if ((base = getenv("HOME")) && *base)
		n = snprintf(buf, len, "%s/.cache/pagelab/evstream", base);
	else
		return NULL;
	return n > 0 && (size_t)n < len ? buf : NULL;
}

static int entry_path(char *buf, size_t len, const char *dir, const struct pl_evcache_key *key,
		      const char *suffix)
{
	int n = snprintf(buf, len, "%s/%016llx%016llx-%llu%s", dir,
			 (unsigned long long)key->hash[0], (unsigned long long)key->hash[1],
			 (unsigned long long)key->size, suffix);

	return n > 0 && (size_t)n < len ? 0 : -ENAMETOOLONG;
}

static uint64_t header_sum(const struct evc_header *hd)
{
	uint64_t h[2] = { 1, 2 };

	hash_block(h, (const unsigned char *)hd, offsetof(struct evc_header, header_sum));
	return h[0];
}

/* The checksum of @bytes bytes of @fd from @off, in blocks. Return: 0 or -errno/-EIO. */
static int sum_range(int fd, uint64_t off, uint64_t bytes, uint64_t *sum)
{
	unsigned char *buf = malloc(EVC_BLOCK);
	uint64_t h[2] = { 3, 4 }, done = 0;

	if (!buf)
		return -ENOMEM;
	while (done < bytes) {
		size_t want = bytes - done < EVC_BLOCK ? (size_t)(bytes - done) : EVC_BLOCK;
		ssize_t n = pread_full(fd, buf, want, off + done);

		if (n < 0 || (size_t)n != want) {
			free(buf);
			return n < 0 ? (int)n : -EIO;
		}
		hash_block(h, buf, want);
		done += want;
	}
	free(buf);
	*sum = h[0];
	return 0;
}

struct pl_evstream *pl_evcache_load(const char *dir, const struct pl_evcache_key *key,
				    struct pl_trace_stats *stats, const char **why)
{
	struct evc_header hd;
	struct pl_evstream *s;
	struct stat st;
	char path[4096];
	uint64_t sum = 0;
	int fd;

	*why = "";
	if (entry_path(path, sizeof(path), dir, key, EVC_SUFFIX))
		return NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;		/* a plain miss */
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (uint64_t)st.st_size < sizeof(hd) ||
	    pread_full(fd, &hd, sizeof(hd), 0) != (ssize_t)sizeof(hd)) {
		*why = "shorter than its header";
		goto bad;
	}
	if (memcmp(hd.magic, EVC_MAGIC, sizeof(hd.magic)) || hd.version != PL_EVCACHE_VERSION ||
	    hd.stats_size != sizeof(hd.stats)) {
		*why = "another format";
		goto bad;
	}
	if (hd.header_sum != header_sum(&hd) || memcmp(&hd.key, key, sizeof(*key))) {
		*why = "header checksum or key differs";
		goto bad;
	}
	/* The header's sizes against the file's real one, before anything is read by them. */
	if (hd.stream_bytes != (uint64_t)st.st_size - sizeof(hd)) {
		*why = "cut or extended (its size differs from its header's)";
		goto bad;
	}
	if (sum_range(fd, sizeof(hd), hd.stream_bytes, &sum) || sum != hd.stream_sum) {
		*why = "stream checksum differs";
		goto bad;
	}
	s = pl_evstream_adopt(fd, sizeof(hd), hd.stream_bytes, (unsigned long)hd.events);
	if (!s) {
		*why = "out of memory";
		goto bad;
	}
	*stats = hd.stats;
	utimensat(AT_FDCWD, path, NULL, 0);	/* just used: the last to be trimmed */
	return s;
bad:
	close(fd);
	return NULL;
}

/* Remove the entries used longest ago until the rest take at most @max_bytes. */
static void trim(const char *dir, uint64_t max_bytes)
{
	struct ent { struct timespec t; uint64_t size; char name[256]; } *e;
	unsigned int n = 0;
	uint64_t total = 0;
	struct dirent *d;
	DIR *dp = opendir(dir);

	if (!dp)
		return;
	e = malloc(EVC_MAX_ENTRIES * sizeof(*e));
	while (e && n < EVC_MAX_ENTRIES && (d = readdir(dp))) {
		size_t len = strlen(d->d_name);
		struct stat st;

		if (len <= strlen(EVC_SUFFIX) || len >= sizeof(e->name) ||
		    strcmp(d->d_name + len - strlen(EVC_SUFFIX), EVC_SUFFIX) ||
		    fstatat(dirfd(dp), d->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		e[n].t = st.st_mtim;
		e[n].size = (uint64_t)st.st_size;
		memcpy(e[n].name, d->d_name, len + 1);
		total += e[n].size;
		n++;
	}
	while (e && total > max_bytes && n) {
		unsigned int old = 0;

		for (unsigned int i = 1; i < n; i++)
			if (e[i].t.tv_sec < e[old].t.tv_sec ||
			    (e[i].t.tv_sec == e[old].t.tv_sec && e[i].t.tv_nsec < e[old].t.tv_nsec))
				old = i;
		unlinkat(dirfd(dp), e[old].name, 0);
		total -= e[old].size;
		e[old] = e[--n];
	}
	free(e);
	closedir(dp);
}

/* mkdir -p @dir, private to the user. */
static int make_dir(const char *dir)
{
	char p[4096];
	size_t len = strlen(dir);

	if (len >= sizeof(p))
		return -ENAMETOOLONG;
	memcpy(p, dir, len + 1);
	for (char *c = p + 1; *c; c++) {
		if (*c != '/')
			continue;
		*c = 0;
		if (mkdir(p, 0700) && errno != EEXIST)
			return -errno;
		*c = '/';
	}
	if (mkdir(p, 0700) && errno != EEXIST)
		return -errno;
	return 0;
}

int pl_evcache_store(const char *dir, const struct pl_evcache_key *key,
		     const struct pl_evstream *s, const struct pl_trace_stats *stats,
		     uint64_t max_bytes)
{
	uint64_t bytes = pl_evstream_bytes(s), off = 0, h[2] = { 3, 4 };
	char tmp[4096], path[4096];
	struct evc_header hd;
	unsigned char *buf;
	int fd, err;

	if (sizeof(hd) + bytes > max_bytes)
		return -EFBIG;
	err = make_dir(dir);
	if (err)
		return err;
	if (entry_path(path, sizeof(path), dir, key, EVC_SUFFIX) ||
	    entry_path(tmp, sizeof(tmp), dir, key, ".tmp-XXXXXX"))
		return -ENAMETOOLONG;
	buf = malloc(EVC_BLOCK);
	if (!buf)
		return -ENOMEM;
	fd = mkstemp(tmp);
	if (fd < 0) {
		err = -errno;
		free(buf);
		return err;
	}
	/* The stream after a header-sized hole, summed as it goes; the header last. */
	while (!err && off < bytes) {
		size_t want = bytes - off < EVC_BLOCK ? (size_t)(bytes - off) : EVC_BLOCK;
		ssize_t n = pl_evstream_pread(s, buf, want, off);

		if (n != (ssize_t)want) {
			err = n < 0 ? (int)n : -EIO;
			break;
		}
		hash_block(h, buf, want);
		if (pwrite(fd, buf, want, (off_t)(sizeof(hd) + off)) != (ssize_t)want)
			err = errno ? -errno : -EIO;
		off += want;
	}
	free(buf);
	if (!err) {
		memset(&hd, 0, sizeof(hd));
		memcpy(hd.magic, EVC_MAGIC, sizeof(hd.magic));
		hd.version = PL_EVCACHE_VERSION;
		hd.stats_size = sizeof(hd.stats);
		hd.key = *key;
		hd.stream_bytes = bytes;
		hd.events = pl_evstream_events(s);
		hd.stream_sum = h[0];
		hd.stats = *stats;
		hd.header_sum = header_sum(&hd);
		if (pwrite(fd, &hd, sizeof(hd), 0) != (ssize_t)sizeof(hd))
			err = errno ? -errno : -EIO;
	}
	if (close(fd) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err) {
		unlink(tmp);
		return err;
	}
	trim(dir, max_bytes);
	return 0;
}
