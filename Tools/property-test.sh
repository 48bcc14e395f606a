#!/usr/bin/env bash
# A long run of the determinism property test (Tests/PermissionLedgerTestingTests/DeterminismPropertyTests.swift):
# random valid event sequences, each checked for (a) verify and rebuild, (b) two replays alike,
# (c) as-of answers equal a replay of every prefix, (d) export/import byte for byte.
#
#   Tools/property-test.sh [CASES] [MAX_EVENTS]      # default 2000 sequences of up to 60 events
#
# The suite's own run is short (60 sequences); this one is for before a release or after a change
# to the projector, the codec or the digest. A failure prints the shrunk sequence as JSON Lines
# and a .fixedSeed(...) that reproduces it.
set -euo pipefail
cd "$(dirname "$0")/.."

cases="${1:-2000}"
max_events="${2:-60}"
case "$cases$max_events" in
    *[!0-9]*) echo "usage: Tools/property-test.sh [CASES] [MAX_EVENTS] (whole numbers)" >&2; exit 2 ;;
esac

Tools/setup.sh
swift build --build-tests

log=$(mktemp)
trap 'rm -f "$log"' EXIT
echo "property test: $cases sequences of up to $max_events events"
start=$(date +%s.%N)
status=0
PERMISSION_LEDGER_PROPERTY_CASES="$cases" PERMISSION_LEDGER_PROPERTY_MAX_EVENTS="$max_events" \
    swift test --skip-build --disable-xctest --filter 'DeterminismPropertyTests/replaysAreDeterministic' 2>&1 \
    | tee "$log" || status=$?
end=$(date +%s.%N)
elapsed=$(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.1f", e - s }')
# The test's own time, without the start of `swift test` (which may wait for another SwiftPM's lock).
in_test=$(sed -n 's/.*Test replaysAreDeterministic() \(passed\|failed\) after \([0-9.]*\) seconds.*/\2/p' "$log" | tail -1)
in_test=${in_test:-$elapsed}
rate=$(awk -v n="$cases" -v t="$in_test" 'BEGIN { if (t > 0) printf "%.1f", n / t; else print "-" }')
if [ "$status" -eq 0 ]; then verdict="passed"; else verdict="FAILED"; fi
echo "property test $verdict: $cases sequences of up to $max_events events in $in_test s ($rate sequences/s; $elapsed s wall clock with swift test)"
exit "$status"
