#!/usr/bin/env bash
# Builds the reference documentation (DocC) of the library modules and reports its coverage.
#
#   bash Tools/docs.sh                # build the archives, print coverage per module
#   bash Tools/docs.sh --check        # the same; exit 1 when a public symbol lacks documentation
#   bash Tools/docs.sh --out DIR      # write nothing into the checkout: build a copy of it in DIR/package
#                                     # and leave the archives in DIR/docs (a read-only checkout builds)
#
# Modules: LMDB, PermissionModel, PermissionLedger, PermissionLedgerService and
# PermissionLedgerTesting. No swift-docc-plugin is needed:
#   1. `swift package --scratch-path .build-docs dump-symbol-graph --emit-extension-block-symbols`
#      builds the package (debug, in the git-ignored .build-docs/, apart from the everyday .build/)
#      and extracts the public symbol graph of each library module into
#      .build-docs/<triple>/symbolgraph/ (as the plugin does: extensions of other modules' types
#      get pages of their own, under the extended module). Its extra attempts at the synthesized
#      test-runner modules (PermissionLedgerPackageTests, PermissionLedgerPackageDiscoveredTests),
#      which it never builds, always fail; those errors are ignored. Any other error (a compile
#      error, say) stops the script.
#   2. `docc convert` turns each module's graphs (Module.symbols.json plus the Module@Other files
#      holding its extensions of other modules' types) into .build-docs/docs/<Module>.doccarchive,
#      with the catalog Sources/<Module>/Documentation.docc when there is one, and with
#      --experimental-documentation-coverage (its report: documentation-coverage.json in the
#      archive). Modules are converted dependencies first, with
#      --enable-experimental-external-link-support and each dependency's archive passed as
#      --dependency, so that a link to another module resolves when written absolute:
#      ``/PermissionModel/PermissionModelError``. (A relative ``PermissionModel/PermissionModelError``
#      does not resolve: in a module extending PermissionModel's types it means the local page of
#      that extended module.) The full docc output is kept in .build-docs/docs/<Module>.log.
#
# Printed per module: this script's own count of public symbols documented, docc's coverage
# (pages with an abstract / all, by docc's categories) and docc's warnings (broken links,
# undocumented parameters of a documented function, ...), which do not fail --check. docc's figures
# include the members a type inherits from standard-library protocols (SetAlgebra's methods on
# an OptionSet, say), which carry no comment here, so they stay below 100%; the own count is the
# one --check enforces.
#
# The rule of the own count, applied to the symbol graph JSON: a symbol of a module's graphs
# (public or open; the graphs hold nothing less visible) is missing documentation when it has no
# doc comment of its own with a summary, that is, its `docComment` is absent, blank, comes from
# another module (the doc of a standard-library protocol requirement it implements, which docc does
# not show by default), or starts with a callout (`- Throws:` alone), a code block or a heading
# instead of a sentence. Not counted at all, because the compiler, not the source, provides them:
#   - members whose identifier contains `::SYNTHESIZED::`: protocol default implementations and
#     inherited members (`!=`, `hash(into:)`/`hashValue` of RawRepresentable types, SetAlgebra's
#     methods, `localizedDescription`, ...);
#   - declarations without a source location: implicit declarations such as an enum's derived
#     `init(rawValue:)`, derived `==`/`hash(into:)`, and CodingKeys;
#   - extension blocks (`extension Ledger`), which are not symbols of their own.
# An explicit declaration that implements a protocol requirement (`description`, `id`, `<`, an
# explicit `init(rawValue:)`) is counted: it needs its own comment.
# Missing symbols are printed as `Module: symbol path (kind)` lines.
#
# Exit status: 0; 1 with --check when a symbol is missing documentation; 2 when the build, the
# symbol graph extraction or docc fails (or on wrong usage).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# In dependency order; each module's (documented) library dependencies.
modules=(LMDB PermissionModel PermissionLedger PermissionLedgerService PermissionLedgerTesting)
dependencies() {
    case "$1" in
        PermissionLedger) echo LMDB PermissionModel ;;
        PermissionLedgerService) echo PermissionLedger ;;
        PermissionLedgerTesting) echo PermissionLedger PermissionModel ;;
    esac
}
scratch=.build-docs
docs="$scratch/docs"

usage="usage: bash Tools/docs.sh [--check] [--out DIR]"
check=false
out=""
while [ $# -gt 0 ]; do
    case "$1" in
        --check) check=true ;;
        --out) [ $# -ge 2 ] || { echo "$usage" >&2; exit 2; }; out="$2"; shift ;;
        -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "$usage" >&2; exit 2 ;;
    esac
    shift
done
if [ -n "$out" ]; then
    # SwiftPM writes Package.resolved and its build folder beside Package.swift: build a copy of the
    # checkout's files instead (what git tracks, or everything but build folders outside a git checkout).
    mkdir -p "$out"
    out="$(cd "$out" && pwd)"
    rm -rf "$out/package"
    mkdir -p "$out/package"
    if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
        git ls-files -z --cached --others --exclude-standard | (cd "$out/package" && xargs -0 -I{} dirname {} | sort -u | xargs mkdir -p)
        git ls-files -z --cached --others --exclude-standard | xargs -0 -I{} cp -p {} "$out/package/{}"
    else
        tar --exclude='./.build*' -cf - . | tar -xf - -C "$out/package"
    fi
    cd "$out/package"
    scratch="$out/build"
    docs="$out/docs"
fi
command -v docc >/dev/null 2>&1 || { echo "docs: docc is not on PATH (it ships with the Swift toolchain)" >&2; exit 2; }
command -v python3 >/dev/null 2>&1 || { echo "docs: python3 is needed to read the symbol graphs" >&2; exit 2; }

mkdir -p "$docs"

# 1. Symbol graphs.
bin="$(swift build --scratch-path "$scratch" --show-bin-path)" || { echo "docs: swift build failed" >&2; exit 2; }
graphs="$(dirname "$bin")/symbolgraph"   # beside .build-docs/<triple>/debug
rm -rf "$graphs"
log="$docs/dump-symbol-graph.log"
echo "docs: building and extracting symbol graphs (log: $log)" >&2
swift package --scratch-path "$scratch" dump-symbol-graph --minimum-access-level public \
    --emit-extension-block-symbols >"$log" 2>&1 || true
if grep -E '(^|: )error:' "$log" | grep -vqE "Failed to emit symbol graph for 'PermissionLedgerPackage(Discovered)?Tests'"; then
    grep -E '(^|: )error:' "$log" | grep -vE "Failed to emit symbol graph for 'PermissionLedgerPackage(Discovered)?Tests'" >&2
    echo "docs: dump-symbol-graph failed (see $log)" >&2
    exit 2
fi
for module in "${modules[@]}"; do
    [ -f "$graphs/$module.symbols.json" ] || { echo "docs: no symbol graph for $module (see $log)" >&2; exit 2; }
done

# 2. One archive per module, dependencies first, so that links to them resolve.
for module in "${modules[@]}"; do
    input="$docs/$module.symbolgraphs"
    rm -rf "$input" "$docs/$module.doccarchive"
    mkdir -p "$input"
    cp "$graphs/$module.symbols.json" "$input/"
    for extra in "$graphs/$module"@*.symbols.json; do
        [ -e "$extra" ] && cp "$extra" "$input/"
    done
    inputs=()
    [ -d "Sources/$module/Documentation.docc" ] && inputs=("Sources/$module/Documentation.docc")
    for dependency in $(dependencies "$module"); do
        inputs+=(--dependency "$docs/$dependency.doccarchive")
    done
    if ! docc convert ${inputs[@]+"${inputs[@]}"} \
        --enable-experimental-external-link-support \
        --additional-symbol-graph-dir "$input" \
        --output-path "$docs/$module.doccarchive" \
        --fallback-display-name "$module" \
        --fallback-bundle-identifier "$module" \
        --experimental-documentation-coverage --coverage-summary-level brief \
        >"$docs/$module.log" 2>&1; then
        cat "$docs/$module.log" >&2
        echo "docs: docc convert failed for $module" >&2
        exit 2
    fi
done

# 3. Summary, and the own count.
status=0
python3 - "$graphs" "$docs" "$check" "${modules[@]}" <<'PYTHON' || status=$?
import glob, json, os, re, sys

graphs, docs, check, modules = sys.argv[1], sys.argv[2], sys.argv[3] == "true", sys.argv[4:]

def own_abstract(symbol, module):
    """Whether the symbol has a doc comment of its own that starts with a summary sentence."""
    comment = symbol.get("docComment")
    if not comment or comment.get("module", module) != module:
        return False
    text = [line.get("text", "").strip() for line in comment.get("lines", [])]
    first = next((line for line in text if line), None)
    # A comment made only of callouts (`- Throws:`, `- Parameters:`), a code block or a heading
    # has no abstract: docc shows no summary for it.
    return first is not None and not re.match(r"([-*+]\s|```|~~~|#)", first)

def docc_figures(log):
    """docc's brief coverage table, as `types 10/10, members 82/106, ...` (pages with an abstract)."""
    figures = []
    for line in open(log, errors="replace"):
        match = re.match(r"\s*(\w[\w ]*?)\s*\|\s*[\d.]+%\s*\((\d+)/(\d+)\)", line)
        if match:
            figures.append(f"{match[1].lower()} {match[2]}/{match[3]}")
    return ", ".join(figures) if figures else "no table (see the log)"

def docc_warnings(log):
    """docc's `warning:`/`error:` lines, each with the location line following it."""
    lines = open(log, errors="replace").read().splitlines()
    found = []
    for i, line in enumerate(lines):
        if re.search(r"\b(warning|error):", line):
            where = next((l.strip()[4:] for l in lines[i + 1:i + 3] if l.strip().startswith("-->")), "")
            where = re.sub(r"^(\.\./)+", "/", where)
            where = where.replace(os.getcwd() + "/", "")
            found.append(line.strip() + (f" ({where})" if where else ""))
    return found

missing_all = []
for module in modules:
    documented = total = skipped = 0
    missing = []
    for path in [f"{graphs}/{module}.symbols.json"] + sorted(glob.glob(f"{graphs}/{module}@*.symbols.json")):
        for symbol in json.load(open(path))["symbols"]:
            if symbol.get("accessLevel") not in ("public", "open") or symbol["kind"]["identifier"] == "swift.extension":
                continue
            if "::SYNTHESIZED::" in symbol["identifier"]["precise"] or "location" not in symbol:
                skipped += 1
                continue
            total += 1
            if own_abstract(symbol, module):
                documented += 1
            else:
                kind = symbol["kind"]["displayName"].lower()
                missing.append(f"{module}: {'.'.join(symbol['pathComponents'])} ({kind})")
    log = f"{docs}/{module}.log"
    warnings = docc_warnings(log)
    print(f"{module}: {documented}/{total} public symbols documented"
          f" ({skipped} compiler-provided not counted);"
          f" docc abstracts: {docc_figures(log)};"
          f" {len(warnings)} docc warning{'s' if len(warnings) != 1 else ''}"
          f" -> {docs}/{module}.doccarchive")
    for warning in warnings:
        print(f"  {warning}")
    missing_all += sorted(missing)

if missing_all:
    print(f"{len(missing_all)} public symbol{'s' if len(missing_all) != 1 else ''} without documentation:")
    for line in missing_all:
        print(line)
    sys.exit(1 if check else 0)
print("every public symbol is documented")
PYTHON
exit "$status"
