#!/usr/bin/env bash
# Runs every cargo-fuzz target of fuzz/ for a while, starting from the committed seeds:
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]     (default 20 s, every target)
#
# CI runs it as a smoke test (10 s each); a long local run is the same command with more
# seconds, e.g. `scripts/fuzz.sh 3600 strict_json`. Each target's growing corpus is kept in
# fuzz/corpus/<target> (not committed); a crash or panic stops the run, leaves the input in
# fuzz/artifacts/<target>/ and fails the script.
#
# cargo fuzz needs nightly compiler flags (-Z sanitizer, coverage passes); on the stable
# toolchain RUSTC_BOOTSTRAP=1 unlocks them. Installs cargo-fuzz when it is missing.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT/fuzz"

SECONDS_PER_TARGET="${1:-20}"
shift || true
export RUSTC_BOOTSTRAP=1

if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "installing cargo-fuzz"
  cargo install --locked cargo-fuzz@0.13.2
fi

mapfile -t ALL < <(cargo fuzz list)
if [ "$#" -gt 0 ]; then TARGETS=("$@"); else TARGETS=("${ALL[@]}"); fi

# No sanitizer: ferry forbids unsafe code, and libFuzzer still catches every panic, overflow
# (debug assertions are on) and timeout; ASan would halve the executions per second.
echo "building ${#ALL[@]} fuzz targets"
cargo fuzz build --sanitizer none

LOG="$(mktemp)"
trap 'rm -f "$LOG"' EXIT
for target in "${TARGETS[@]}"; do
  mkdir -p "corpus/$target"
  echo "== $target: ${SECONDS_PER_TARGET} s from $(find "seeds/$target" -type f | wc -l) seeds"
  status=0
  cargo fuzz run --sanitizer none "$target" "corpus/$target" "seeds/$target" -- \
    -max_total_time="$SECONDS_PER_TARGET" -max_len=65536 -rss_limit_mb=2048 -timeout=10 \
    -print_final_stats=1 >"$LOG" 2>&1 || status=$?
  grep -E '^stat::(number_of_executed_units|peak_rss_mb)|^Done ' "$LOG" || true
  echo "corpus: $(find "corpus/$target" -type f | wc -l) inputs"
  if [ "$status" -ne 0 ]; then
    tail -n 40 "$LOG" >&2
    echo "error: fuzz target $target failed (exit $status); the input is in fuzz/artifacts/$target/" >&2
    exit 1
  fi
done
echo "fuzz smoke: ${#TARGETS[@]} targets, no crash, no panic"
