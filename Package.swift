// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "PermissionLedger",
    platforms: [.macOS(.v14), .iOS(.v17)],
    products: [
        .library(name: "PermissionLedger", targets: ["PermissionLedger"]),
        .library(name: "PermissionModel", targets: ["PermissionModel"]),
        .library(name: "PermissionLedgerTesting", targets: ["PermissionLedgerTesting"]),
        .library(name: "LMDB", targets: ["LMDB"]),
        .library(name: "PermissionLedgerService", targets: ["PermissionLedgerService"]),
        .executable(name: "permission-ledger", targets: ["permission-ledger"]),
        .executable(name: "family-simulation", targets: ["family-simulation"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-crypto", "3.0.0"..<"5.0.0"),
        // The server ecosystem's logging and metrics APIs: a Logger and a metrics factory in Ledger.Options.
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.5.0"),
        // Graceful shutdown in a server (the PermissionLedgerService module only).
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
        // Property-based tests of determinism (test targets only).
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CLMDB",
            pkgConfig: "lmdb",
            providers: [.apt(["liblmdb-dev"])]
        ),
        .target(name: "LMDB", dependencies: ["CLMDB"]),
        .target(name: "PermissionModel"),
        // The raw POSIX work of child processes shared by the tool and ledger-reliability: spawn, wait, forward signals.
        .target(name: "ChildProcess"),
        .target(
            name: "PermissionLedger",
            dependencies: [
                "LMDB",
                "PermissionModel",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ]
        ),
        // The ledger as a swift-service-lifecycle Service: apart, so that the engine does not depend on it.
        .target(
            name: "PermissionLedgerService",
            dependencies: [
                "PermissionLedger",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .executableTarget(
            name: "permission-ledger",
            dependencies: [
                "ChildProcess", "PermissionLedger", "PermissionModel",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .target(name: "PermissionLedgerTesting", dependencies: ["PermissionLedger", "PermissionModel"]),
        // The example of the DocC catalog: a simulated family against a ledger.
        .executableTarget(name: "family-simulation", dependencies: ["PermissionLedger", "PermissionModel"]),
        // Crash and concurrency tests that need whole processes (Tools/crash-test.sh, Tools/stress-test.sh).
        .executableTarget(
            name: "ledger-reliability",
            dependencies: [
                "ChildProcess", "PermissionLedger", "PermissionModel", "PermissionLedgerTesting",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(name: "LMDBTests", dependencies: ["LMDB"]),
        .testTarget(name: "PermissionModelTests", dependencies: ["PermissionModel"]),
        .testTarget(
            name: "PermissionLedgerTests",
            dependencies: [
                "PermissionLedger", "PermissionLedgerTesting", "PermissionModel", "LMDB", "PermissionLedgerService",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .testTarget(
            name: "PermissionLedgerTestingTests",
            dependencies: [
                "PermissionLedgerTesting", "PermissionLedger", "PermissionModel",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "ChildProcess", "PermissionLedger", "PermissionModel", "permission-ledger", "family-simulation",
                "ledger-reliability",
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
