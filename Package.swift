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
        .target(name: "RepTools", dependencies: ["MotionCore", "RepDetection"]),
        .systemLibrary(
            name: "CUdev",
            pkgConfig: "libudev",
            providers: [.apt(["libudev-dev"])]
        ),
        .executableTarget(
            name: "repd",
            dependencies: [
                "MotionCore", "RepDetection",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(
            name: "repctl",
            dependencies: [
                "MotionCore", "RepDetection", "RepTools",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(
            name: "repd-bench",
            dependencies: [
                "MotionCore", "RepDetection", "RepTools",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(name: "MotionCoreTests", dependencies: ["MotionCore"]),
        .testTarget(name: "RepDetectionTests", dependencies: ["RepDetection", "MotionCore"]),
        .testTarget(name: "RepToolsTests", dependencies: ["RepTools", "RepDetection", "MotionCore"]),
    ],
    swiftLanguageModes: [.v6]
)
