// swift-tools-version: 6.1
import PackageDescription

/// Modules that must build anywhere (no Linux-only APIs, no Foundation): MotionCore, RepDetection.
/// Linux-only modules: CUdev (libudev), LinuxIIO, RepDaemon.
let package = Package(
    name: "repd",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "repd", targets: ["repd"]),
        .executable(name: "repctl", targets: ["repctl"]),
        .executable(name: "repd-bench", targets: ["repd-bench"]),
        .library(name: "MotionCore", targets: ["MotionCore"]),
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
    ],
    targets: [
        .target(
            name: "MotionCore",
            dependencies: [
                .product(name: "OpenCombine", package: "OpenCombine", condition: .when(platforms: [.linux])),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        .target(name: "RepDetection", dependencies: ["MotionCore"]),
        .target(name: "RepProtocol", dependencies: ["MotionCore", "RepDetection"]),
        .target(name: "RepTools", dependencies: ["MotionCore", "RepDetection", "RepProtocol"]),
        .target(name: "RepConfiguration", dependencies: ["MotionCore", "RepDetection"]),
        .target(
            name: "RepDaemon",
            dependencies: [
                "MotionCore", "RepDetection", "RepProtocol", "RepConfiguration", "LinuxIIO",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .target(
            name: "LinuxIIO",
            dependencies: [
                "MotionCore", "CUdev", "CLinuxShims",
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        .target(name: "CLinuxShims"),
        .target(name: "FuzzTargets", dependencies: ["MotionCore", "LinuxIIO", "RepConfiguration", "RepProtocol"]),
        .executableTarget(name: "repd-fuzz", dependencies: ["FuzzTargets"]),
        .target(name: "CBenchDecoder"),
        .systemLibrary(
            name: "CUdev",
            pkgConfig: "libudev",
            providers: [.apt(["libudev-dev"])]
        ),
        .executableTarget(
            name: "repd",
            dependencies: [
                "MotionCore", "RepDetection", "RepConfiguration", "RepDaemon", "RepProtocol",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(
            name: "repctl",
            dependencies: [
                "MotionCore", "RepDetection", "RepTools", "RepProtocol", "RepConfiguration", "LinuxIIO",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(
            name: "repd-bench",
            dependencies: [
                "MotionCore", "RepDetection", "RepTools", "RepProtocol", "LinuxIIO", "CBenchDecoder",
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(name: "MotionCoreTests", dependencies: ["MotionCore"]),
        .testTarget(name: "RepDetectionTests", dependencies: ["RepDetection", "MotionCore"]),
        .testTarget(name: "RepProtocolTests", dependencies: ["RepProtocol"]),
        .testTarget(name: "RepConfigurationTests", dependencies: ["RepConfiguration", "RepDetection"]),
        .testTarget(name: "RepDaemonTests", dependencies: ["RepDaemon", "RepProtocol", "RepDetection", "MotionCore"]),
        .testTarget(name: "LinuxIIOTests", dependencies: ["LinuxIIO", "MotionCore", "RepTools"], exclude: ["umockdev"]),
        .testTarget(name: "FuzzRegressionTests", dependencies: ["FuzzTargets"], exclude: ["corpus"]),
        .testTarget(name: "RepToolsTests", dependencies: ["RepTools", "RepProtocol", "RepDetection", "MotionCore"]),
    ],
    swiftLanguageModes: [.v6]
)
