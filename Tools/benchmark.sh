#!/usr/bin/env bash
# The side-by-side benchmark suite: the ledger, raw LMDB and the same ledger on SQLite (GRDB), on one seeded
# workload in one run. Prints a table of every figure, ratio and target and writes them as JSON.
#
#   bash Tools/benchmark.sh                      # the full suite (30 to 60 minutes on 2 cores; 20 GB of disk in /tmp)
#   bash Tools/benchmark.sh --events 100000 --query-events 1000000 --queries 500   # a quick look
#   bash Tools/benchmark.sh --only append        # some parts: append, queries, group-commit, growth, proofs, report
#   bash Tools/benchmark.sh --baseline REF --only queries   # this build against git REF, in turns (--rounds N, 3)
#   bash Tools/benchmark.sh --help               # every option
#
# The suite is a package of its own (Tools/Benchmarks), so that the main build and CI stay lean; it is built
# in release mode with the ledger's own package as a dependency. Not a test: figures depend on the machine.
# Large ledgers are kept in --dir (default: $TMPDIR/ledger-benchmark-suite) and reused by the next run.
#
# With --baseline REF, the suite of the commit REF (extracted with git archive and built on its own) and this
# build's run in turns, --rounds times each, each on ledgers of its own (their storage formats may differ),
# and `ledger-benchmark compare` prints each workload's median for both, side by side.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
baseline=""
rounds=3
dir="${TMPDIR:-/tmp}/ledger-benchmark-suite"
args=()
while [ $# -gt 0 ]; do
    case "$1" in
        --baseline) baseline="$2"; shift 2 ;;
        --rounds) rounds="$2"; shift 2 ;;
        --dir) dir="$2"; shift 2 ;;
        *) args+=("$1"); shift ;;
    esac
done
"$root/Tools/setup.sh" libsqlite3-dev time

# Builds the suite and the tool of the package at $1 in release mode; prints the folder of the executables.
build() {
    (cd "$1/Tools/Benchmarks" && swift build -c release --product ledger-benchmark >&2 \
        && swift build -c release --product permission-ledger >&2 && swift build -c release --show-bin-path)
}
bin="$(build "$root")"
if [ -z "$baseline" ]; then
    exec "$bin/ledger-benchmark" suite --tool "$bin/permission-ledger" --dir "$dir" --json "$root/benchmark-results.json" ${args[@]+"${args[@]}"}
fi

source="$dir/baseline-source"
rm -rf "$source"
mkdir -p "$source"
git -C "$root" archive "$baseline" | tar -x -C "$source"
base_bin="$(build "$source")"
results="$dir/compare"
mkdir -p "$results"
base_runs=()
current_runs=()
for round in $(seq 1 "$rounds"); do
    echo "round $round of $rounds: $baseline" >&2
    "$base_bin/ledger-benchmark" suite --tool "$base_bin/permission-ledger" --dir "$dir/baseline" \
        --json "$results/baseline-$round.json" ${args[@]+"${args[@]}"}
    base_runs+=("$results/baseline-$round.json")
    echo "round $round of $rounds: this build" >&2
    "$bin/ledger-benchmark" suite --tool "$bin/permission-ledger" --dir "$dir/current" \
        --json "$results/current-$round.json" ${args[@]+"${args[@]}"}
    current_runs+=("$results/current-$round.json")
done
"$bin/ledger-benchmark" compare --baseline-name "$baseline" \
    --baseline "$(IFS=,; echo "${base_runs[*]}")" --current "$(IFS=,; echo "${current_runs[*]}")"
