#!/usr/bin/env bash
# Replays every fixture and checks every expected result, with the permission-ledger tool.
#
#   Tools/check-fixtures.sh [TOOL [FIXTURES_DIR]]
#
# TOOL is a permission-ledger executable (a path, or a name on PATH). Without it the tool is built
# from this package first: swift build -c release --product permission-ledger.
# FIXTURES_DIR defaults to the Fixtures/ directory beside this script (or $FIXTURES when set), so
# another project's CI can check its own fixture library with a tool it built:
#
#   path/to/check-fixtures.sh /usr/local/bin/permission-ledger my-fixtures/
#
# For every valid fixture NAME.jsonl (each must have NAME.expected beside it, see
# Tools/Fixtures/make_expected.py for the format):
#   - it is imported into a fresh ledger, and every check of NAME.expected is run there as
#     `permission-ledger ARGS... --ledger L --format json`: it must exit 0 and print the expected
#     JSON (compared as JSON values with python3; as text when python3 is missing);
#   - `permission-ledger replay NAME.jsonl --expect-digest HEX` must exit 0, HEX being the digest of
#     the first check (`digest`, taken at the head).
# For every invalid fixture invalid/NAME.jsonl, whose header has `# error: LINE: MESSAGE`:
#   - imported into a fresh ledger, it must exit 1 with `FILE:LINE: MESSAGE` as the first line of
#     standard error;
#   - into a ledger already holding every line but the last (the good prefix), the same, and the
#     ledger's export must be unchanged: nothing was written.
#
# Prints `ok NAME` or `FAIL NAME: why` a fixture, then `N passed, N failed`; exits 1 on any failure
# (2 on wrong usage or when the tool cannot be built).
set -uo pipefail

# Ledgers seal personal fields with secrets of their own, which the chain hashes in the expected results depend
# on: they are drawn from this fixed seed (for tests only), as Tools/Fixtures/make_expected.py drew them.
export PERMISSION_LEDGER_TEST_SEED="permission-ledger fixtures"

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"

if [[ $# -gt 2 || "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
    sed -n '2,27p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
    [[ $# -gt 2 ]] && exit 2 || exit 0
fi

if [[ $# -ge 1 && -n "$1" ]]; then
    tool="$1"
    if [[ "$tool" != */* ]]; then
        tool="$(command -v "$tool")" || { echo "check-fixtures: no $1 on PATH" >&2; exit 2; }
    fi
    [[ -x "$tool" ]] || { echo "check-fixtures: $1 is not an executable" >&2; exit 2; }
    tool="$(cd "$(dirname "$tool")" && pwd)/$(basename "$tool")"
else
    echo "check-fixtures: building permission-ledger (release)" >&2
    (cd "$root" && swift build -c release --product permission-ledger >&2) || { echo "check-fixtures: the build failed" >&2; exit 2; }
    tool="$(cd "$root" && swift build -c release --show-bin-path)/permission-ledger"
fi

fixtures="${2:-${FIXTURES:-$root/Fixtures}}"
[[ -d "$fixtures" ]] || { echo "check-fixtures: no fixtures directory $fixtures" >&2; exit 2; }
fixtures="$(cd "$fixtures" && pwd)"

if command -v python3 >/dev/null 2>&1; then have_python=1; else have_python=0; fi
if [[ $have_python == 0 ]]; then
    echo "check-fixtures: python3 not found: outputs are compared as text" >&2
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/check-fixtures.XXXXXX")" || exit 2
trap 'rm -rf "$work"' EXIT
export TMPDIR="$work"   # replay's temporary ledgers go here too, and are removed with it
unset PERMISSION_LEDGER

passed=0
failed=0

# A fresh ledger path (not yet created), in a directory of its own.
fresh_ledger() {
    echo "$(mktemp -d "$work/ledger.XXXXXX")/ledger"
}

# With python3: runs every check of an expected file against a ledger, comparing outputs as JSON
# values. Prints "digest HEX" (the first check's) when all pass, else "why" for the first failure.
# One python3 process a fixture: its start-up is slow on small machines.
py_run_checks='
import json, subprocess, sys
tool, ledger, path = sys.argv[1:4]
name = path.rsplit("/", 1)[-1]

def first_difference(e, a, at):
    if type(e) != type(a) or not isinstance(e, (dict, list)):
        if e == a and type(e) == type(a): return None
        return "%s: expected %s, got %s" % (at or "output", json.dumps(e)[:160], json.dumps(a)[:160])
    if isinstance(e, dict):
        for k in list(e) + [k for k in a if k not in e]:
            if k not in a: return "%s.%s: missing" % (at, k)
            if k not in e: return "%s.%s: not expected (%s)" % (at, k, json.dumps(a[k])[:160])
            d = first_difference(e[k], a[k], at + "." + k)
            if d: return d
        return None
    for i, (x, y) in enumerate(zip(e, a)):
        d = first_difference(x, y, "%s[%d]" % (at, i))
        if d: return d
    if len(e) != len(a): return "%s: expected %d items, got %d" % (at or "output", len(e), len(a))
    return None

digest = None
number = 0
for line in open(path, encoding="utf-8"):
    if not line.strip(): continue
    number += 1
    where = "%s:%d" % (name, number)
    try:
        check = json.loads(line)
        args, expected, ignore = check["args"], check["output"], check.get("ignore", [])
        assert isinstance(args, list) and args and all(isinstance(a, str) for a in args)
    except Exception:
        sys.exit(print("%s: not a check: %s" % (where, line[:160].strip())))
    if number == 1:
        if args != ["digest"] or not isinstance(expected.get("digest"), str):
            sys.exit(print("%s: the first check must be [\"digest\"], with its digest" % where))
        digest = expected["digest"]
    run = subprocess.run([tool] + args + ["--ledger", ledger, "--format", "json"], capture_output=True)
    command = " ".join(args)
    if run.returncode != 0:
        err = run.stderr.decode("utf-8", "replace").split("\n")[0]
        sys.exit(print("%s: %s: exit %d: %s" % (where, command, run.returncode, err)))
    try:
        actual = json.loads(run.stdout)
    except ValueError:
        sys.exit(print("%s: %s: the output is not JSON: %s" % (where, command, run.stdout[:160])))
    for key in ignore:
        if isinstance(actual, dict): actual.pop(key, None)
        if isinstance(expected, dict): expected.pop(key, None)
    if actual != expected:
        sys.exit(print("%s: %s: %s" % (where, command, first_difference(expected, actual, "") or "differs")))
if digest is None:
    sys.exit(print("%s has no checks" % name))
print("digest " + digest)
'

# Without python3: splits one line of NAME.expected, in the layout make_expected.py writes
# ({"args":[…],"output":…[,"ignore":[…]]}, arguments free of quotes and backslashes), into
# $work/args (NUL-separated), $work/expected (the output, as the tool writes it) and $work/ignore.
split_check() {
    local line="$1" rest args output ignore=""
    [[ "$line" == '{"args":["'* ]] || { echo "not a check: ${line:0:160}"; return 1; }
    rest="${line#'{"args":["'}"
    args="${rest%%'"],"output":'*}"
    output="${rest#*'"],"output":'}"
    if [[ "$output" =~ ^(.*),\"ignore\":\[([^]]*)\]\}$ ]]; then
        output="${BASH_REMATCH[1]}"
        ignore="${BASH_REMATCH[2]}"
    else
        output="${output%\}}"
    fi
    : >"$work/args"
    while [[ -n "$args" ]]; do
        printf '%s\0' "${args%%'","'*}" >>"$work/args"
        [[ "$args" == *'","'* ]] && args="${args#*'","'}" || args=""
    done
    printf '%s' "$output" >"$work/expected"
    ignore="${ignore//\"/}"
    printf '%s\n' "${ignore//,/$'\n'}" >"$work/ignore"
}

# Without python3: whether $work/actual is, as text, $work/expected once the keys of $work/ignore
# (numbers) are left out.
same_text() {
    local actual key
    actual="$(cat "$work/actual")"
    while read -r key; do
        [[ -z "$key" ]] && continue
        actual="$(printf '%s' "$actual" | sed -E "s/,\"$key\":-?[0-9]+([,}])/\1/")"
    done <"$work/ignore"
    [[ "$actual" == "$(cat "$work/expected")" ]]
}

# Without python3: runs every check; same output as py_run_checks.
bash_run_checks() {
    local ledger="$1" expected="$2" name number=0 line digest="" status
    local -a args
    name="$(basename "$expected")"
    while IFS= read -r line || [[ -n "$line" ]]; do
        [[ -z "$line" ]] && continue
        number=$((number + 1))
        split_check "$line" >"$work/why" || { echo "$name:$number: $(cat "$work/why")"; return; }
        args=()
        while IFS= read -r -d '' arg; do args+=("$arg"); done <"$work/args"
        if [[ $number == 1 ]]; then
            digest="$(grep -oE '"digest":"[0-9a-f]{64}"' "$work/expected" | grep -oE '[0-9a-f]{64}')"
            if [[ "${args[*]}" != "digest" || -z "$digest" ]]; then
                echo "$name:1: the first check must be [\"digest\"], with its digest"
                return
            fi
        fi
        "$tool" "${args[@]}" --ledger "$ledger" --format json >"$work/actual" 2>"$work/err"
        status=$?
        if [[ $status != 0 ]]; then
            echo "$name:$number: ${args[*]}: exit $status: $(head -n 1 "$work/err")"
            return
        fi
        if ! same_text; then
            echo "$name:$number: ${args[*]}: expected $(head -c 160 "$work/expected"), got $(head -c 160 "$work/actual")"
            return
        fi
    done <"$expected"
    [[ -n "$digest" ]] && echo "digest $digest" || echo "$name has no checks"
}

# Checks one valid fixture; prints why it fails, or nothing.
check_valid() {
    local file="$1" expected="$2" ledger result status
    ledger="$(fresh_ledger)"
    if ! "$tool" import --ledger "$ledger" "$file" >"$work/out" 2>"$work/err"; then
        echo "import failed: $(head -n 1 "$work/err")"
        return
    fi
    if [[ $have_python == 1 ]]; then
        result="$(python3 -c "$py_run_checks" "$tool" "$ledger" "$expected")"
    else
        result="$(bash_run_checks "$ledger" "$expected")"
    fi
    if [[ "$result" != "digest "* ]]; then
        echo "${result:-the checks could not be run}"
        return
    fi
    "$tool" replay "$file" --expect-digest "${result#digest }" >"$work/out" 2>"$work/err"
    status=$?
    if [[ $status != 0 ]]; then
        echo "replay --expect-digest ${result#digest }: exit $status: $(head -n 1 "$work/err")"
    fi
}

# Checks one invalid fixture; prints why it fails, or nothing.
check_invalid() {
    local file="$1"
    local error want ledger first status before after
    error="$(grep -m 1 '^# error: ' "$file")" || { echo "no '# error: LINE: MESSAGE' header"; return; }
    want="$file:${error#'# error: '}"

    # Into an empty ledger.
    ledger="$(fresh_ledger)"
    "$tool" import --ledger "$ledger" "$file" >"$work/out" 2>"$work/err"
    status=$?
    first="$(head -n 1 "$work/err")"
    [[ $status == 1 ]] || { echo "import into an empty ledger: exit $status, not 1: $first"; return; }
    [[ "$first" == "$want" ]] || { echo "import into an empty ledger: expected \"$want\", got \"$first\""; return; }

    # Into a ledger holding the good prefix: rejected the same way, and nothing written.
    ledger="$(fresh_ledger)"
    sed '$d' "$file" >"$work/prefix.jsonl"
    "$tool" import --ledger "$ledger" "$work/prefix.jsonl" >"$work/out" 2>"$work/err" \
        || { echo "the lines before the last do not import: $(head -n 1 "$work/err")"; return; }
    before="$("$tool" export --ledger "$ledger" 2>"$work/err")" || { echo "export failed: $(head -n 1 "$work/err")"; return; }
    "$tool" import --ledger "$ledger" "$file" >"$work/out" 2>"$work/err"
    status=$?
    first="$(head -n 1 "$work/err")"
    [[ $status == 1 ]] || { echo "import after its good prefix: exit $status, not 1: $first"; return; }
    [[ "$first" == "$want" ]] || { echo "import after its good prefix: expected \"$want\", got \"$first\""; return; }
    after="$("$tool" export --ledger "$ledger" 2>"$work/err")" || { echo "export failed: $(head -n 1 "$work/err")"; return; }
    [[ "$before" == "$after" ]] || echo "the rejected import changed the ledger's export"
}

report() {
    local name="$1" why="$2"
    if [[ -z "$why" ]]; then
        echo "ok $name"
        passed=$((passed + 1))
    else
        echo "FAIL $name: $why"
        failed=$((failed + 1))
    fi
}

shopt -s nullglob
for file in "$fixtures"/*.jsonl; do
    name="$(basename "$file" .jsonl)"
    expected="$fixtures/$name.expected"
    if [[ ! -f "$expected" ]]; then
        report "$name" "no expected results ($name.expected)"
        continue
    fi
    report "$name" "$(check_valid "$file" "$expected")"
done
for file in "$fixtures"/invalid/*.jsonl; do
    report "invalid/$(basename "$file" .jsonl)" "$(check_invalid "$file")"
done

echo "$passed passed, $failed failed"
[[ $failed == 0 && $passed -gt 0 ]]
