// swift-tools-version:6.1
// The libFuzzer targets of PermissionLedger: a package of its own, so that the main build and CI stay untouched.
//
//   bash Tools/fuzz.sh [SECONDS] [TARGET...]     # builds, seeds and runs every target (600 s each by default)
//
// The targets have no `main` of their own: libFuzzer's is linked in. Build them with SwiftPM's own flags,
//   swift build -c release --sanitize=fuzzer --sanitize=address -Xswiftc -parse-as-library
// (Tools/fuzz.sh does). `-Xswiftc -sanitize=fuzzer` alone does not link: SwiftPM then still aliases `main`
// to the executable's renamed entry point (`fuzz_event_json_main`), which a library-mode module lacks.
import Foundation
import PackageDescription

/// The ledger's own package, two folders up. Its identity is the name of its folder, whatever a clone is called.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardizedFileURL
let ledgerPackage = root.lastPathComponent

let package = Package(
    name: "PermissionLedgerFuzz",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "fuzz-event-json", targets: ["fuzz-event-json"]),
        .executable(name: "fuzz-event-record", targets: ["fuzz-event-record"]),
    ],
    dependencies: [
        .package(path: root.path),
    ],
    targets: [
        // The properties each target checks, and the writing of seed corpora from JSON Lines files.
        .target(
            name: "FuzzProperties",
            dependencies: [
                .product(name: "PermissionLedger", package: ledgerPackage),
                .product(name: "PermissionModel", package: ledgerPackage),
            ]
        ),
        // `EventJSON.decode(line:)`, the parser `permission-ledger import` runs on every line.
        .executableTarget(name: "fuzz-event-json", dependencies: ["FuzzProperties"]),
        // `EventRecord.decode`, the decoder of every event read back from LMDB.
        .executableTarget(name: "fuzz-event-record", dependencies: ["FuzzProperties"]),
    ],
    swiftLanguageModes: [.v6]
)
