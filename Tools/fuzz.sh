#!/usr/bin/env bash
# libFuzzer runs of the two parsers of untrusted bytes: the JSON Lines parser of `import` (fuzz-event-json)
# and the decoder of stored records (fuzz-event-record). Tools/Fuzz/README.md says what each checks.
#
#   Tools/fuzz.sh [SECONDS] [TARGET...]      # default: 600 s of each target, one after another
#   Tools/fuzz.sh 60 fuzz-event-record       # a short run of one
#
# Builds the fuzz package (Tools/Fuzz, release, with libFuzzer and AddressSanitizer), seeds each corpus from
# the fixtures (every line of Fixtures/*.jsonl and Fixtures/invalid/*.jsonl; the stored records of the
# fixtures' events), then runs each target for SECONDS. The corpora grow across runs in Tools/Fuzz/corpus/;
# crash inputs and each run's log go to Tools/Fuzz/artifacts/TARGET/ (both git-ignored). Exits 1 when a target
# crashed (a trap, a broken property, a memory error, a timeout of 10 s or 2 GB of memory on one input),
# after printing the input's path and how to reproduce it.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
all_targets=(fuzz-event-json fuzz-event-record)

seconds=600
if [ $# -gt 0 ] && [[ "$1" =~ ^[0-9]+$ ]]; then
    seconds="$1"
    shift
fi
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${all_targets[@]}")
for target in "${targets[@]}"; do
    case " ${all_targets[*]} " in
        *" $target "*) ;;
        *) echo "usage: Tools/fuzz.sh [SECONDS] [TARGET...] with TARGET among: ${all_targets[*]}" >&2; exit 2 ;;
    esac
done

"$root/Tools/setup.sh"
cd "$root/Tools/Fuzz"
# --sanitize=fuzzer, not -Xswiftc -sanitize=fuzzer: only then does SwiftPM leave `main` to libFuzzer.
build=(-c release --sanitize=fuzzer --sanitize=address -Xswiftc -parse-as-library)
swift build "${build[@]}"
bin="$(swift build "${build[@]}" --show-bin-path)"

crashed=0
summary=()
for target in "${targets[@]}"; do
    corpus="$root/Tools/Fuzz/corpus/$target"
    artifacts="$root/Tools/Fuzz/artifacts/$target"
    mkdir -p "$corpus" "$artifacts"
    log="$artifacts/fuzz-$(date +%Y%m%d-%H%M%S).log"
    options=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$artifacts/")
    case "$target" in
        fuzz-event-json)
            "$bin/$target" --write-seeds "$corpus" "$root"/Fixtures/*.jsonl "$root"/Fixtures/invalid/*.jsonl
            options+=(-dict="$root/Tools/Fuzz/event-json.dict")
            ;;
        fuzz-event-record)
            "$bin/$target" --write-seeds "$corpus" "$root"/Fixtures/*.jsonl
            ;;
    esac
    echo "fuzz: $target for $seconds s (log: $log)"
    status=0
    "$bin/$target" "${options[@]}" "$corpus" >"$log" 2>&1 || status=$?

    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    # The last status line: "#RUNS DONE cov: N ft: N corp: FILES/SIZE ...".
    status_line=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
    cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$status_line")
    ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$status_line")
    corp=$(sed -n 's/.* corp: \([^ ]*\).*/\1/p' <<<"$status_line")
    files=$(find "$corpus" -type f | wc -l)
    if [ "$status" -eq 0 ]; then
        crashes="0"
    else
        crashed=1
        input=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
        crashes="1: ${input:-see the log} (exit $status)"
        echo "fuzz: $target CRASHED; the end of its log:" >&2
        grep -v -E '^(#[0-9]+|")' "$log" | tail -40 >&2
        echo "fuzz: reproduce with: $bin/$target ${input:-CRASH_INPUT}" >&2
        echo "fuzz: minimize with:  $bin/$target -minimize_crash=1 -runs=100000 ${input:-CRASH_INPUT}" >&2
    fi
    summary+=("$target: $seconds s, runs ${runs:-?}, ${rate:-?} exec/s, corpus $files files (${corp:-?} in use), cov ${cov:-?}, ft ${ft:-?}, crashes $crashes")
done

echo
for line in "${summary[@]}"; do echo "fuzz: $line"; done
exit "$crashed"
