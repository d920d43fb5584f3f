// SPDX-License-Identifier: MIT
/*
 * replay.c - run fuzz_ops inputs without libFuzzer, and translate between
 * the binary inputs and a readable text form.
 *
 *   fuzz_replay PATH...            run each input: a binary file, every
 *                                  file of a directory, or each seed of a
 *                                  .txt file
 *   fuzz_replay --asm SEEDS.txt DIR   write each seed as DIR/NAME (binary)
 *   fuzz_replay --trace PATH...    print each operation as it runs
 *
 * Text form (tests/fuzz/seeds.txt), one item per line, '#' comments:
 *   seed NAME          starts a seed
 *   config N           its config byte (design, pcp_disabled: fuzz_ops.h)
 *   [cpuK] OP ARG...   an operation by name, on vCPU K (default 0); missing
 *                      arguments are 0
 * An input that crashed the fuzzer becomes a regression seed by running it
 * with --trace and pasting the printed operations under a new "seed" line.
 *
 * Invariant: a seed's binary is exactly what fz_run() decodes, so the text
 * seeds, the committed corpus and the fuzzer agree on every operation.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "fuzz_ops.h"

#define FZ_MAX_INPUT 65536

struct input {
	char name[128];
	uint8_t data[FZ_MAX_INPUT];
	size_t size;
};

static int lookup_op(const char *name)
{
	for (int i = 0; i < FZ_NR_OPCODES; i++)
		if (fz_op_descs[i].name && !strcmp(fz_op_descs[i].name, name))
			return i;
	return -1;
}

static int put(struct input *in, unsigned long v)
{
	if (in->size >= FZ_MAX_INPUT || v > 255)
		return -1;
	in->data[in->size++] = (uint8_t)v;
	return 0;
}

/* Assemble one line into @in. Return: 0, or -1 with a message. */
static int asm_line(struct input *in, char *line, const char *file, int lineno)
{
	char *tok = strtok(line, " \t\n"), *end;
	unsigned int cpu = 0, nargs = 0;
	int op;

	if (!tok)
		return 0;
	if (!strcmp(tok, "config")) {
		tok = strtok(NULL, " \t\n");
		if (!tok || in->size != 0 || put(in, strtoul(tok, &end, 0)) || *end)
			goto bad;
		return 0;
	}
	if (in->size == 0 && put(in, 0))
		goto bad;
	if (!strncmp(tok, "cpu", 3)) {
		cpu = (unsigned int)strtoul(tok + 3, &end, 10);
		if (*end || cpu >= FZ_NR_CPUS)
			goto bad;
		tok = strtok(NULL, " \t\n");
	}
	op = tok ? lookup_op(tok) : -1;
	if (op < 0 || put(in, (unsigned long)op | cpu << 6))
		goto bad;
	while ((tok = strtok(NULL, " \t\n"))) {
		if (nargs++ >= fz_op_descs[op].nargs || put(in, strtoul(tok, &end, 0)) || *end)
			goto bad;
	}
	for (; nargs < fz_op_descs[op].nargs; nargs++)
		put(in, 0);
	return 0;
bad:
	fprintf(stderr, "%s:%d: cannot assemble this line\n", file, lineno);
	return -1;
}

/* Call @fn on each seed of a text file. Return: seeds, or -1. */
static int for_each_seed(const char *file, int (*fn)(struct input *, void *), void *arg)
{
	static struct input in;
	char line[1024];
	int lineno = 0, seeds = 0, open = 0;
	FILE *fp = fopen(file, "r");

	if (!fp) {
		perror(file);
		return -1;
	}
	while (fgets(line, sizeof(line), fp)) {
		char *hash = strchr(line, '#');

		lineno++;
		if (hash)
			*hash = '\0';
		if (!strncmp(line, "seed ", 5)) {
			if (open && fn(&in, arg))
				goto fail;
			memset(&in, 0, sizeof(in));
			snprintf(in.name, sizeof(in.name), "%s", strtok(line + 5, " \t\n"));
			open = 1;
			seeds++;
			continue;
		}
		if (!open && strtok(line, " \t\n"))
			goto fail;
		if (open && asm_line(&in, line, file, lineno))
			goto fail;
	}
	if (open && fn(&in, arg))
		goto fail;
	fclose(fp);
	return seeds;
fail:
	fclose(fp);
	return -1;
}

static int run_input(struct input *in, void *arg)
{
	(void)arg;
	fz_run(in->data, in->size);
	return 0;
}

static int write_input(struct input *in, void *arg)
{
	char path[4096];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", (const char *)arg, in->name);
	fp = fopen(path, "wb");
	if (!fp || fwrite(in->data, 1, in->size, fp) != in->size) {
		perror(path);
		return -1;
	}
	fclose(fp);
	return 0;
}

static int run_file(const char *path)
{
	static struct input in;
	FILE *fp = fopen(path, "rb");

	if (!fp) {
		perror(path);
		return -1;
	}
	in.size = fread(in.data, 1, sizeof(in.data), fp);
	fclose(fp);
	fz_run(in.data, in.size);
	return 1;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Run every file of a directory, in name order. Return: inputs run, or -1. */
static int run_dir(const char *dir)
{
	char *names[4096];
	int n = 0, runs = 0;
	struct dirent *de;
	DIR *d = opendir(dir);

	if (!d) {
		perror(dir);
		return -1;
	}
	while ((de = readdir(d)) && n < (int)(sizeof(names) / sizeof(names[0])))
		if (de->d_name[0] != '.')
			names[n++] = strdup(de->d_name);
	closedir(d);
	qsort(names, (size_t)n, sizeof(names[0]), cmp_str);
	for (int i = 0; i < n; i++) {
		char path[4096];

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (run_file(path) < 0)
			runs = -1;
		else if (runs >= 0)
			runs++;
		free(names[i]);
	}
	return runs;
}

int main(int argc, char **argv)
{
	int total = 0, i = 1;

	if (argc == 4 && !strcmp(argv[1], "--asm")) {
		if (mkdir(argv[3], 0755) && errno != EEXIST) {
			perror(argv[3]);
			return 1;
		}
		i = for_each_seed(argv[2], write_input, argv[3]);
		if (i < 0)
			return 1;
		printf("fuzz_replay: wrote %d inputs to %s\n", i, argv[3]);
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "--trace")) {
		fz_set_trace(1);
		i++;
	}
	if (i >= argc) {
		fprintf(stderr, "usage: %s [--trace] PATH... | --asm SEEDS.txt DIR\n", argv[0]);
		return 2;
	}
	for (; i < argc; i++) {
		struct stat st;
		size_t len = strlen(argv[i]);
		int n;

		if (stat(argv[i], &st)) {
			perror(argv[i]);
			return 1;
		}
		if (S_ISDIR(st.st_mode))
			n = run_dir(argv[i]);
		else if (len > 4 && !strcmp(argv[i] + len - 4, ".txt"))
			n = for_each_seed(argv[i], run_input, NULL);
		else
			n = run_file(argv[i]);
		if (n < 0)
			return 1;
		total += n;
	}
	printf("fuzz_replay: %d inputs, no findings\n", total);
	return 0;
}
