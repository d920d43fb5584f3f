#!/usr/bin/env bash
# Install what building and testing pagelab needs, only if missing:
# Debian packages (compiler, CMake, Ninja, cmocka, liburcu, clang with
# compiler-rt for the libFuzzer target, zlib/zstd/xz for compressed traces, the zstd tool
# for `pagelab trace record`, valgrind for `--mode instr` and its client-request headers)
# and a Python
# venv with the packages of python/requirements.txt. Idempotent and quiet
# when everything is there.
set -euo pipefail
cd "$(dirname "$0")/.."

pkgs=(gcc binutils make cmake ninja-build pkg-config libcmocka-dev liburcu-dev python3 python3-venv
	clang libclang-rt-dev zlib1g-dev libzstd-dev liblzma-dev zstd xz-utils valgrind)
pkgs+=(trace-cmd)  # scripts/capture-tracedat-fixture.sh, and `trace-cmd report` of a recording
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# A python3 outside Debian's (pyenv) counts if it can make venvs.
if [ ${#missing[@]} -gt 0 ] && command -v python3 >/dev/null && python3 -m venv --help >/dev/null 2>&1; then
	missing=($(printf '%s\n' "${missing[@]}" | grep -vx -e python3 -e python3-venv || true))
fi
if [ ${#missing[@]} -gt 0 ]; then
	echo "install-deps: installing ${missing[*]}"
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo="sudo"
	export DEBIAN_FRONTEND=noninteractive
	$sudo apt-get update -qq
	$sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

venv=.venv
stamp="$venv/.requirements.sha"
want=$(cat python/requirements.txt python/pyproject.toml | sha256sum | cut -d' ' -f1)
if [ ! -x "$venv/bin/python" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
	echo "install-deps: setting up $venv"
	python3 -m venv "$venv"
	"$venv/bin/pip" install -q --upgrade pip >/dev/null
	"$venv/bin/pip" install -q -r python/requirements.txt
	"$venv/bin/pip" install -q -e python/ >/dev/null
	echo "$want" > "$stamp"
fi
