// swift-tools-version:6.1
// The benchmark suite of PermissionLedger: a package of its own, so that the main build and CI stay lean.
//
//   bash Tools/benchmark.sh            # the side-by-side suite: the ledger, raw LMDB and SQLite (GRDB)
//
// GRDB is here only, as the SQLite a Swift developer would otherwise build on (docs/PERFORMANCE.md says why).
import Foundation
import PackageDescription

/// The ledger's own package, two folders up. Its identity is the name of its folder, whatever a clone is called.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardizedFileURL
let ledgerPackage = root.lastPathComponent

let package = Package(
    name: "PermissionLedgerBenchmarks",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(path: root.path),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.0.0"),
    ],
    targets: [
        .executableTarget(
            name: "ledger-benchmark",
            dependencies: [
                .product(name: "PermissionLedger", package: ledgerPackage),
                .product(name: "PermissionModel", package: ledgerPackage),
                .product(name: "PermissionLedgerTesting", package: ledgerPackage),
                .product(name: "LMDB", package: ledgerPackage),
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
