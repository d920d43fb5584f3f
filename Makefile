# pagelab: `make run` runs the main job, `make test` runs every test.
# Both install what they need first (scripts/install-deps.sh).

BUILD      ?= build
ASAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan
VENV       ?= .venv
GEN        := -G Ninja

.PHONY: all deps build build-asan build-tsan test test-c test-asan test-tsan test-py run clean

all: build

deps:
	@scripts/install-deps.sh

build: deps
	@cmake -S . -B $(BUILD) $(GEN) -DCMAKE_BUILD_TYPE=Release >/dev/null
	@cmake --build $(BUILD)

build-asan: deps
	@cmake -S . -B $(ASAN_BUILD) $(GEN) -DCMAKE_BUILD_TYPE=Debug \
		-DPAGELAB_SANITIZE=address,undefined >/dev/null
	@cmake --build $(ASAN_BUILD)

build-tsan: deps
	@cmake -S . -B $(TSAN_BUILD) $(GEN) -DCMAKE_BUILD_TYPE=Debug \
		-DPAGELAB_SANITIZE=thread >/dev/null
	@cmake --build $(TSAN_BUILD)

test-c: build
	ctest --test-dir $(BUILD) --output-on-failure

test-asan: build-asan
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		ctest --test-dir $(ASAN_BUILD) --output-on-failure

test-py: build
	PAGELAB_BENCH=$(abspath $(BUILD))/pagelab-bench $(VENV)/bin/python -m pytest -q python/tests

# The tests with real threads (CTest label "concurrency") under ThreadSanitizer,
# without ASLR where allowed (gcc 12's TSan rejects some high-entropy layouts).
test-tsan: build-tsan
	norand=$$(setarch $$(uname -m) -R true 2>/dev/null && echo "setarch $$(uname -m) -R"); \
	TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
		$$norand ctest --test-dir $(TSAN_BUILD) -L concurrency --output-on-failure

test: test-c test-asan test-tsan test-py

# The main job: every available seed's table on the default machine, quick,
# and the HTML report in out/report.html.
run: build
	PAGELAB_BENCH=$(abspath $(BUILD))/pagelab-bench $(VENV)/bin/python -m pagelab reproduce all --quick

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(TSAN_BUILD)
