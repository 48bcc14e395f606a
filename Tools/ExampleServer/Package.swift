// swift-tools-version:6.1
// An example HTTP server over a PermissionLedger: a package of its own, so that the library's build stays lean.
//
//   swift build -c release                     # ledger-server and ledger-load
//   swift test                                 # the server's tests
//   bash ../server-load.sh                     # wrk throughput and the SIGTERM check (see README.md)
import Foundation
import PackageDescription

/// The ledger's own package, two folders up. Its identity is the name of its folder, whatever a clone is called.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardizedFileURL
let ledgerPackage = root.lastPathComponent

let package = Package(
    name: "PermissionLedgerExampleServer",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(path: root.path),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ],
    targets: [
        .target(
            name: "LedgerServer",
            dependencies: [
                .product(name: "PermissionLedger", package: ledgerPackage),
                .product(name: "PermissionModel", package: ledgerPackage),
                .product(name: "PermissionLedgerService", package: ledgerPackage),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        .executableTarget(
            name: "ledger-server",
            dependencies: [
                "LedgerServer",
                .product(name: "PermissionLedger", package: ledgerPackage),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // The load client speaks HTTP/1.1 over POSIX sockets itself: no HTTP library.
        .executableTarget(name: "ledger-load"),
        .testTarget(
            name: "LedgerServerTests",
            dependencies: [
                "LedgerServer",
                .product(name: "PermissionLedger", package: ledgerPackage),
                .product(name: "PermissionModel", package: ledgerPackage),
                .product(name: "PermissionLedgerTesting", package: ledgerPackage),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
