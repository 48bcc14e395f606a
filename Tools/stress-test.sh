#!/usr/bin/env bash
# The concurrency stress test: 8 writer tasks append (single events, batches, and appends the
# ledger must reject) for a minute while 4 reader processes check every snapshot they take; then verify.
#
#   Tools/stress-test.sh [--seconds N] [--writers N] [--readers N] [--seed S] [--dir DIR]
#
# CI runs a small version (6 seconds) from the test suite (ReliabilityTests).
set -euo pipefail
cd "$(dirname "$0")/.."
Tools/setup.sh
swift build -c release --product ledger-reliability >&2
exec .build/release/ledger-reliability stress "$@"
