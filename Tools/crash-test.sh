#!/usr/bin/env bash
# The crash test: starts a writer, kills it with SIGKILL at a random moment, checks the ledger
# (verify passes, every acknowledged event is there and intact, nothing half-written, the next append
# continues the chain), and does it again; 200 times by default. Ends with "N kills, 0 lost, 0 damaged".
#
#   Tools/crash-test.sh [--kills N] [--max-delay MS] [--kills-per-ledger N] [--seed S] [--dir DIR]
#
# With `erase` first, the erasure crash test: the writer erases subjects and applies retention limits, and
# after each kill every erasure must be whole (its events read erased, its keys gone from the key store) or
# absent (everything readable); 100 kills by default. Ends with "N kills, 0 partial erasures, 0 damaged".
#
#   Tools/crash-test.sh erase [--kills N] [--max-delay MS] [--kills-per-ledger N] [--seed S] [--dir DIR]
#
# CI runs a small version (12 kills) from the test suite (ReliabilityTests).
set -euo pipefail
cd "$(dirname "$0")/.."
Tools/setup.sh
swift build -c release --product ledger-reliability >&2
if [[ "${1:-}" == erase ]]; then
    shift
    exec .build/release/ledger-reliability crash-erase "$@"
fi
exec .build/release/ledger-reliability crash "$@"
