// swift-tools-version: 6.1
import PackageDescription

/// Modules that must build anywhere (no Linux-only APIs, no Foundation): MotionCore, RepDetection.
/// Linux-only modules: CUdev (libudev), LinuxIIO, RepDaemon.
let package = Package(
    name: "repd",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "repd", targets: ["repd"]),
        .library(name: "MotionCore", targets: ["MotionCore"]),
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
        .systemLibrary(
            name: "CUdev",
            pkgConfig: "libudev",
            providers: [.apt(["libudev-dev"])]
        ),
        .executableTarget(
            name: "repd",
            dependencies: [
                "MotionCore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(name: "MotionCoreTests", dependencies: ["MotionCore"]),
    ],
    swiftLanguageModes: [.v6]
)
