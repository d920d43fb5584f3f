# pagelab: `make run` runs the main job, `make test` runs every test.
# Both install what they need first (scripts/install-deps.sh).

BUILD      ?= build
ASAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 300
FUZZ_ARGS  ?=
VENV       ?= .venv
GEN        := -G Ninja

.PHONY: all deps build build-bench build-asan build-tsan build-fuzz test test-c test-asan test-tsan test-fuzz \
	test-py test-budgets test-install test-pip test-docs docs man fuzz fuzz-corpus run install uninstall clean

all: build

deps:
	@scripts/install-deps.sh

build: deps
	@cmake -S . -B $(BUILD) $(GEN) -DCMAKE_BUILD_TYPE=Release >/dev/null
	@cmake --build $(BUILD)

# What `make run` needs and no more: pagelab-bench (not the tests, not the .so).
build-bench: deps
	@cmake -S . -B $(BUILD) $(GEN) -DCMAKE_BUILD_TYPE=Release >/dev/null
	@cmake --build $(BUILD) --target pagelab-bench

build-asan: deps
	@cmake -S . -B $(ASAN_BUILD) $(GEN) -DCMAKE_BUILD_TYPE=Debug \
		-DPAGELAB_SANITIZE=address,undefined >/dev/null
	@cmake --build $(ASAN_BUILD)

build-tsan: deps
	@cmake -S . -B $(TSAN_BUILD) $(GEN) -DCMAKE_BUILD_TYPE=Debug \
		-DPAGELAB_SANITIZE=thread >/dev/null
	@cmake --build $(TSAN_BUILD)

# The libFuzzer target needs clang; its own build dir, out of the gcc builds.
build-fuzz: deps
	@CC=clang cmake -S . -B $(FUZZ_BUILD) $(GEN) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DPAGELAB_SANITIZE=address,undefined -DPAGELAB_FUZZ=ON >/dev/null
	@cmake --build $(FUZZ_BUILD) --target fuzz_ops fuzz_trace

# CTest in parallel, one job per host CPU (the tests assert behaviour, not timings).
NPROC      ?= $(shell nproc 2>/dev/null || echo 2)

test-c: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(NPROC)

test-asan: build-asan
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		ctest --test-dir $(ASAN_BUILD) --output-on-failure -j $(NPROC)

test-py: build
	PAGELAB_BENCH=$(abspath $(BUILD))/pagelab-bench PAGELAB_REQUIRE_LIB=1 $(VENV)/bin/python -m pytest -q python/tests

# The hot paths' instruction budgets (tests/budgets/budgets.tsv): callgrind
# counts, deterministic; a path more than 3% over its budget fails.
test-budgets: build
	PAGELAB_BENCH=$(abspath $(BUILD))/pagelab-bench $(VENV)/bin/python -m pagelab budgets \
		--jobs $(NPROC)

# The tests with real threads (CTest label "concurrency") under ThreadSanitizer,
# without ASLR where allowed (gcc 12's TSan rejects some high-entropy layouts).
test-tsan: build-tsan
	norand=$$(setarch $$(uname -m) -R true 2>/dev/null && echo "setarch $$(uname -m) -R"); \
	TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
		$$norand ctest --test-dir $(TSAN_BUILD) -L concurrency --output-on-failure

# The fuzzers for FUZZ_SECONDS in all, from their committed corpora (read
# only): fuzz_ops (the allocator's operations) two thirds of it, fuzz_trace
# (traces, snapshots, manifests, replays) the rest. What they learn goes to
# $(FUZZ_BUILD)/corpus*, crashes to $(FUZZ_BUILD)/artifacts. fuzz_trace runs
# under a memory cap and a per-input time cap: an allocation or a run that
# follows a number in the input rather than its size is a finding.
FUZZ_TRACE_SECONDS = $(shell echo $$(( $(FUZZ_SECONDS) / 3 )))
FUZZ_OPS_SECONDS   = $(shell echo $$(( $(FUZZ_SECONDS) - $(FUZZ_SECONDS) / 3 )))
FUZZ_TRACE_LIMITS ?= -rss_limit_mb=2048 -malloc_limit_mb=1024 -timeout=20 -max_len=65536
test-fuzz: build-fuzz
	@mkdir -p $(FUZZ_BUILD)/corpus $(FUZZ_BUILD)/corpus-trace $(FUZZ_BUILD)/artifacts
	@echo "fuzz_ops: $(FUZZ_OPS_SECONDS) s, log in $(FUZZ_BUILD)/fuzz.log"
	@ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		$(FUZZ_BUILD)/fuzz_ops -max_total_time=$(FUZZ_OPS_SECONDS) -max_len=1024 -timeout=30 \
		-print_final_stats=1 -artifact_prefix=$(FUZZ_BUILD)/artifacts/ $(FUZZ_ARGS) \
		$(FUZZ_BUILD)/corpus tests/fuzz/corpus >$(FUZZ_BUILD)/fuzz.log 2>&1; \
	rc=$$?; if [ $$rc -ne 0 ]; then tail -n 60 $(FUZZ_BUILD)/fuzz.log; \
	else grep -e '^Done' -e '^stat::' -e '^fuzz_ops:' $(FUZZ_BUILD)/fuzz.log; fi; [ $$rc -eq 0 ] || exit $$rc; \
	echo "fuzz_trace: $(FUZZ_TRACE_SECONDS) s, log in $(FUZZ_BUILD)/fuzz-trace.log"; \
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		$(FUZZ_BUILD)/fuzz_trace -max_total_time=$(FUZZ_TRACE_SECONDS) $(FUZZ_TRACE_LIMITS) \
		-print_final_stats=1 -artifact_prefix=$(FUZZ_BUILD)/artifacts/ $(FUZZ_ARGS) \
		$(FUZZ_BUILD)/corpus-trace tests/fuzz/trace-corpus >$(FUZZ_BUILD)/fuzz-trace.log 2>&1; \
	rc=$$?; if [ $$rc -ne 0 ]; then tail -n 60 $(FUZZ_BUILD)/fuzz-trace.log; \
	else grep -e '^Done' -e '^stat::' $(FUZZ_BUILD)/fuzz-trace.log; fi; exit $$rc

# Longer fuzzing for people: an hour unless FUZZ_SECONDS says otherwise.
fuzz: FUZZ_SECONDS = 3600
fuzz: test-fuzz

# Reassemble the committed seed corpus from its text form.
fuzz-corpus: build
	$(BUILD)/fuzz_replay --asm tests/fuzz/seeds.txt tests/fuzz/corpus

# Install into a temporary prefix and build an outside program against it:
# with pkg-config, with find_package(pagelab), and through add_subdirectory.
test-install: build
	tests/install/run.sh $(BUILD)

# `pip install .` into a fresh venv (build/pip-venv, rebuilt every time), then
# the ten-line example from another directory: the packaged library and bench.
test-pip: deps
	rm -rf $(BUILD)/pip-venv
	python3 -m venv $(BUILD)/pip-venv
	$(BUILD)/pip-venv/bin/pip install -q .
	cd $(BUILD) && env -u PAGELAB_BENCH -u PAGELAB_LIB pip-venv/bin/python $(abspath docs/examples/quickstart.py)
	cd $(BUILD) && env -u PAGELAB_BENCH pip-venv/bin/pagelab --version

test: test-c test-asan test-tsan test-fuzz test-py test-budgets test-install test-pip test-docs

# The main job: every available seed's table on the default machine, quick,
# and the HTML report in out/report.html.
run: build-bench
	PAGELAB_BENCH=$(abspath $(BUILD))/pagelab-bench $(VENV)/bin/python -m pagelab reproduce all --quick

# The documentation site (mkdocs, material theme) into out/site. The reference
# pages in docs/reference are generated from the parsers, `pagelab-bench --list
# --json` and the headers' kernel-doc, and committed (`make man` refreshes them;
# test_docs.py fails when one is stale).
DOCS_ENV := NO_MKDOCS_2_WARNING=1 PAGELAB_BENCH=$(abspath $(BUILD))/pagelab-bench
docs: build-bench
	$(DOCS_ENV) $(VENV)/bin/mkdocs build --strict --quiet
	@echo "docs: out/site/index.html"

# The site builds with no broken link, the committed man pages are what the
# parsers give, the README's verdict table is docs/verdicts.md, and no tracked
# file speaks of the project's working history or of one machine's paths.
test-docs: docs
	$(DOCS_ENV) $(VENV)/bin/python -m pytest -q python/tests/test_docs.py
	python3 scripts/check-hygiene.py

# Regenerate the committed generated files from the code: the man pages
# (man/*.1) and the reference pages (docs/reference/{cli,suites,designs,c-api,
# metrics}.md). Run it after changing an option, a suite key, a switch, a
# metric or a public header's kernel-doc.
man: build-bench
	$(DOCS_ENV) $(VENV)/bin/python scripts/gen-docs.py --bench $(BUILD)/pagelab-bench \
		--docs docs --man man

# `pagelab` and `pagelab-bench` on root's PATH (sudo does not see .venv/bin):
# two small wrappers in $(PREFIX)/bin that run this tree's programs.
PREFIX ?= /usr/local
install:
	@test -x $(BUILD)/pagelab-bench -a -x $(VENV)/bin/pagelab || \
		{ echo "make install: run make build (as yourself) first" >&2; exit 2; }
	install -d $(DESTDIR)$(PREFIX)/bin
	printf '#!/bin/sh\n# pagelab from %s (make install)\nPAGELAB_BENCH="$${PAGELAB_BENCH:-%s}" exec %s "$$@"\n' \
		"$(CURDIR)" "$(abspath $(BUILD))/pagelab-bench" "$(abspath $(VENV))/bin/pagelab" \
		> $(DESTDIR)$(PREFIX)/bin/pagelab
	printf '#!/bin/sh\n# pagelab-bench from %s (make install)\nexec %s "$$@"\n' \
		"$(CURDIR)" "$(abspath $(BUILD))/pagelab-bench" > $(DESTDIR)$(PREFIX)/bin/pagelab-bench
	chmod 755 $(DESTDIR)$(PREFIX)/bin/pagelab $(DESTDIR)$(PREFIX)/bin/pagelab-bench
	@echo "installed $(DESTDIR)$(PREFIX)/bin/pagelab and pagelab-bench"

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/pagelab $(DESTDIR)$(PREFIX)/bin/pagelab-bench

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(TSAN_BUILD) $(FUZZ_BUILD)
