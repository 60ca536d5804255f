// swift-tools-version: 6.1
import PackageDescription

/// Modules that must build anywhere (no Linux-only APIs, no Foundation): MotionCore, MotionFixtures, MotionSimulation,
/// PlainText, RepDetection, RepSettings, RepConfiguration. Linux-only modules: CUdev (libudev), LinuxIIO, RepDaemon.
/// RepJournal needs the system's SQLite (CSQLite, libsqlite3-dev); RepUplink the system's libmosquitto (CMosquitto,
/// libmosquitto-dev).
///
/// `REPD_WITHOUT_WEB=1` in the environment leaves out the station display (repd-web, RepWeb, RepWebTests) and
/// repd-bench, so the packages only they need (Hummingbird and its dependencies, hdrhistogram-swift) are not built.
/// They stay declared: a build with and one without share Package.resolved (scripts/test runs both at once; leaving
/// them out could rewrite it without their pins). scripts/test builds its sanitizer runs so, which run neither.
let withoutWeb = Context.environment["REPD_WITHOUT_WEB"] == "1"

let package = Package(
    name: "repd",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "repd", targets: ["repd"]),
        .executable(name: "repctl", targets: ["repctl"]),
        .executable(name: "repd-bench", targets: ["repd-bench"]),
        .executable(name: "repd-web", targets: ["repd-web"]),
        .library(name: "MotionCore", targets: ["MotionCore"]),
        .library(name: "MotionFixtures", targets: ["MotionFixtures"]),
        .library(name: "MotionSimulation", targets: ["MotionSimulation"]),
        .library(name: "RepDetection", targets: ["RepDetection"]),
    ],
    dependencies: [
        .package(url: "https://github.com/OpenCombine/OpenCombine.git", from: "0.14.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-system.git", from: "1.4.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.80.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.6.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.6.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift.git", from: "0.1.0"),
        // HTTP for the optional station display (repd-web) only; without its default traits
        // (swift-configuration, full Foundation).
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1", traits: []),
    ],
    targets: [
        // The core: samples, the provider protocol and its one sample sink, the SPSC ring.
        .target(
            name: "MotionCore",
            dependencies: [
                .product(name: "OpenCombine", package: "OpenCombine", condition: .when(platforms: [.linux]))
            ]
        ),
        // Text without Foundation: decimal numbers, whole small files, trimming.
        .target(name: "PlainText", dependencies: [.product(name: "SystemPackage", package: "swift-system")]),
        // Fixture CSV files and the provider that replays them.
        .target(
            name: "MotionFixtures",
            dependencies: ["MotionCore", "PlainText", .product(name: "SystemPackage", package: "swift-system")]
        ),
        // Generated motion: sines, functions of time, workouts, walks.
        // … and barbell sets with their true per-rep quality (measured with RepDetection's phase rules).
        .target(name: "MotionSimulation", dependencies: ["MotionCore", "RepDetection"]),
        .target(name: "RepDetection", dependencies: ["MotionCore"]),
        // The build's version as `make VERSION=…` (scripts/package) sets it: one C function, portable.
        .target(name: "CBuildVersion"),
        .target(name: "RepProtocol", dependencies: ["CBuildVersion", "MotionCore", "RepDetection"]),
        // The client side of the protocol: server lines read back into types, and a blocking socket client.
        .target(
            name: "RepClient",
            dependencies: [
                "MotionCore", "RepDetection", "RepProtocol", .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        .target(
            name: "RepTools",
            dependencies: [
                "MotionCore", "MotionFixtures", "MotionSimulation", "PlainText", "RepDetection", "RepProtocol",
            ]),
        // The settings each module takes (sensor, socket, journal, uplink): plain structs, no behaviour, no imports.
        .target(name: "RepSettings"),
        .target(name: "RepConfiguration", dependencies: ["PlainText", "RepDetection", "RepSettings"]),
        // SIGHUP taken and logged (repd and repd-web read their configuration only at start).
        .target(
            name: "DaemonSignals",
            dependencies: [
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ]
        ),
        .target(
            name: "RepDaemon",
            dependencies: [
                "DaemonSignals", "MotionCore", "MotionFixtures", "MotionSimulation", "PlainText", "RepDetection",
                "RepProtocol", "RepConfiguration", "RepSettings", "LinuxIIO", "RepJournal", "RepUplink",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .target(
            name: "LinuxIIO",
            dependencies: [
                "MotionCore", "PlainText", "RepSettings", "CUdev", "CLinuxShims",
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(name: "CLinuxShims"),
        .target(
            name: "FuzzTargets",
            dependencies: ["MotionCore", "MotionFixtures", "PlainText", "LinuxIIO", "RepConfiguration", "RepProtocol"]
        ),
        .executableTarget(name: "repd-fuzz", dependencies: ["FuzzTargets"]),
        .target(name: "CBenchDecoder"),
        // The on-board event journal: append, query since an id, retention (SQLite, WAL).
        .target(name: "RepJournal", dependencies: ["CSQLite", "PlainText", "RepSettings"]),
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // The fleet uplink: follows the journal and publishes every event to an MQTT broker (libmosquitto).
        .target(
            name: "RepUplink",
            dependencies: [
                "CMosquitto", "CLinuxShims", "LinuxIIO", "MotionCore", "RepJournal", "RepProtocol", "RepSettings",
                "PlainText",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // libmosquitto's header (Debian libmosquitto-dev) and a loader that opens libmosquitto.so.1 when the uplink
        // starts: a daemon whose uplink is off never maps it, nor the OpenSSL it brings.
        .target(
            name: "CMosquitto",
            linkerSettings: [.linkedLibrary("dl")]
        ),
        .systemLibrary(
            name: "CUdev",
            pkgConfig: "libudev",
            providers: [.apt(["libudev-dev"])]
        ),
        .executableTarget(
            name: "repd",
            dependencies: [
                "MotionCore", "PlainText", "RepDetection", "RepConfiguration", "RepDaemon", "RepProtocol",
                "RepSettings",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(
            name: "repctl",
            dependencies: [
                "MotionCore", "MotionFixtures", "MotionSimulation", "PlainText", "RepDetection", "RepTools",
                "RepProtocol", "RepClient", "RepConfiguration", "LinuxIIO",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "repd-bench",
            dependencies: [
                "MotionCore", "MotionFixtures", "MotionSimulation", "RepDetection", "RepTools", "RepProtocol",
                "RepClient", "LinuxIIO", "CBenchDecoder",
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // The station display: a client of repd's socket that serves one live page over HTTP (Hummingbird).
        .target(
            name: "RepWeb",
            dependencies: [
                "DaemonSignals", "RepProtocol", "RepClient", "RepConfiguration",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .executableTarget(
            name: "repd-web",
            dependencies: [
                "RepWeb", "RepConfiguration", "RepProtocol",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // The scratch folder tests write to, removed as the test process exits.
        .target(name: "TestScratch", path: "Tests/TestScratch"),
        .testTarget(name: "MotionCoreTests", dependencies: ["MotionCore"]),
        .testTarget(
            name: "MotionFixturesTests",
            dependencies: ["MotionFixtures", "MotionSimulation", "MotionCore", "PlainText", "TestScratch"]),
        .testTarget(name: "MotionSimulationTests", dependencies: ["MotionSimulation", "MotionCore", "RepDetection"]),
        .testTarget(name: "PlainTextTests", dependencies: ["PlainText", "TestScratch"]),
        .testTarget(
            name: "RepDetectionTests",
            dependencies: ["RepDetection", "MotionCore", "MotionFixtures", "MotionSimulation"]),
        .testTarget(name: "RepProtocolTests", dependencies: ["RepProtocol"]),
        .testTarget(
            name: "RepClientTests", dependencies: ["RepClient", "RepProtocol", "RepDetection", "MotionCore"]),
        .testTarget(name: "RepJournalTests", dependencies: ["RepJournal", "CSQLite", "PlainText", "TestScratch"]),
        .testTarget(name: "RepUplinkTests", dependencies: ["RepUplink", "RepJournal", "RepProtocol", "TestScratch"]),
        .testTarget(
            name: "RepWebTests",
            dependencies: [
                "RepWeb", "RepProtocol", "TestScratch",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            exclude: ["browser"]),
        .testTarget(
            name: "RepConfigurationTests",
            dependencies: ["RepConfiguration", "RepDetection", "RepSettings", "TestScratch"]),
        .testTarget(
            name: "RepDaemonTests",
            dependencies: [
                "RepDaemon", "RepProtocol", "RepClient", "RepDetection", "MotionCore", "MotionFixtures",
                "MotionSimulation",
                "RepJournal", "RepUplink", "RepSettings", "TestScratch",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        .testTarget(
            name: "LinuxIIOTests",
            dependencies: [
                "LinuxIIO", "MotionCore", "MotionFixtures", "MotionSimulation", "RepDetection", "RepTools",
                "TestScratch",
            ],
            exclude: ["umockdev"]),
        .testTarget(name: "FuzzRegressionTests", dependencies: ["FuzzTargets"], exclude: ["corpus"]),
        .testTarget(
            name: "RepToolsTests",
            dependencies: [
                "RepTools", "RepProtocol", "RepDetection", "MotionCore", "MotionFixtures", "MotionSimulation",
                "TestScratch",
            ]),
    ],
    swiftLanguageModes: [.v6]
)

if withoutWeb {
    let webAndBench: Set = ["repd-bench", "RepWeb", "repd-web", "RepWebTests"]
    package.products.removeAll { webAndBench.contains($0.name) }
    package.targets.removeAll { webAndBench.contains($0.name) }
}
