#!/usr/bin/env bash
# The side-by-side benchmark suite: the ledger, raw LMDB and the same ledger on SQLite (GRDB), on one seeded
# workload in one run. Prints a table of every figure, ratio and target and writes them as JSON.
#
#   bash Tools/benchmark.sh                      # the full suite (20 to 50 minutes on 2 cores; 20 GB of disk in /tmp)
#   bash Tools/benchmark.sh --events 100000 --query-events 1000000 --queries 500   # a quick look
#   bash Tools/benchmark.sh --only append        # some parts: append, queries, group-commit
#   bash Tools/benchmark.sh --help               # every option
#
# The suite is a package of its own (Tools/Benchmarks), so that the main build and CI stay lean; it is built
# in release mode with the ledger's own package as a dependency. Not a test: figures depend on the machine.
# Large ledgers are kept in --dir (default: $TMPDIR/ledger-benchmark-suite) and reused by the next run.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/Tools/setup.sh" libsqlite3-dev
cd "$root/Tools/Benchmarks"
swift build -c release --product ledger-benchmark
swift build -c release --product permission-ledger
bin="$(swift build -c release --show-bin-path)"
exec "$bin/ledger-benchmark" suite --tool "$bin/permission-ledger" --json "$root/benchmark-results.json" "$@"
