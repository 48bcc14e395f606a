// The benchmarks of PermissionLedger (not tests: figures depend on the machine).
//
//   ledger-benchmark [suite] [options]   the side-by-side suite: the ledger, raw LMDB and SQLite (GRDB) on the
//                                        same seeded workload; prints a table and writes JSON (see Suite.swift)
//   ledger-benchmark append [options]    the ledger alone: batched durable append and in-memory replay; with
//                                        --rules-only, the rules alone in memory (a diagnosis); --format 2,
//                                        a new ledger of storage format 2
//   ledger-benchmark latency [options]   as-of query latency on a small and a large ledger
//   ledger-benchmark group-commit [...]  concurrent durable single appends, with and without group commit
//   ledger-benchmark pages LEDGER        which tables a durable commit rewrites, in leaf pages (a diagnosis)
//   ledger-benchmark disk [options]      what one fdatasync costs on this disk, by pages written (a diagnosis)
//   ledger-benchmark rebuild LEDGER      the rebuild read ahead on a second thread against one thread, in turns
//   ledger-benchmark profile [options]  one kind of the suite's queries on the ledger alone, to profile
//   ledger-benchmark compare [options]   the suite's figures of two builds side by side, from their JSON files
//   ledger-benchmark workload [options]  writes the suite's seeded workload as JSON Lines to standard output
//                                        (to study an import on its own, e.g. under `/usr/bin/time -v`)
//
// Build and run with `bash Tools/benchmark.sh` from the repository's root (a release build).
import Foundation

var arguments = Array(CommandLine.arguments.dropFirst())
let mode = arguments.first.flatMap { $0.hasPrefix("-") ? nil : $0 } ?? "suite"
if arguments.first == mode { arguments.removeFirst() }
switch mode {
case "suite": try await runSuite(arguments)
case "append": try runAppendBenchmark(arguments)
case "latency": try runLatencyBenchmark(arguments)
case "group-commit": try await runGroupCommitBenchmark(arguments)
case "workload": try writeWorkload(arguments)
case "pages": try runPagesDiagnosis(arguments)
case "disk": try runDiskDiagnosis(arguments)
case "rebuild": try runRebuildDiagnosis(arguments)
case "profile": try await runQueryProfile(arguments)
case "compare": try runCompare(arguments)
default:
    print("usage: ledger-benchmark [suite | append | latency | group-commit | pages | disk | rebuild | profile | compare | workload] [options]; --help after a mode lists its options")
    exit(2)
}
