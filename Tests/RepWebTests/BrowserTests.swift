import Foundation
import TestScratch
import Testing

/// The folder holding the built executables (the test bundle sits next to them).
private let productsDirectory: String = {
    let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    return (exe as NSString).deletingLastPathComponent
}()

/// `Tests/RepWebTests/browser`, where the Python scripts live.
private let scriptsDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
    "browser"
).path

/// Debian's Python (the one python3-selenium installs into), not whatever `python3` comes first on the PATH.
private let python = "/usr/bin/python3"

private func runs(_ arguments: [String]) -> Bool {
    guard FileManager.default.isExecutableFile(atPath: arguments[0]) else { return false }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: arguments[0])
    process.arguments = Array(arguments.dropFirst())
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    do { try process.run() } catch { return false }
    process.waitUntilExit()
    return process.terminationStatus == 0
}

private let haveBrowser =
    FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium")
    && FileManager.default.isExecutableFile(atPath: "/usr/bin/chromedriver")
    && runs([python, "-c", "import selenium"])
private let havePython = FileManager.default.isExecutableFile(atPath: python)
/// umockdev's preload library and its Python API (Debian's umockdev, gir1.2-umockdev-1.0, python3-gi).
private let haveUmockdev =
    FileManager.default.isExecutableFile(atPath: "/usr/bin/umockdev-wrapper")
    && runs([python, "-c", "import gi; gi.require_version('UMockdev', '1.0'); from gi.repository import UMockdev"])

/// The emulated accelerometer LinuxIIOTests' hotplug test also uses.
private let wristDevice = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("LinuxIIOTests/umockdev/wrist.umockdev").path

/// Runs one of the scripts with the products folder and a fresh output folder; returns its exit status and output.
private func runScript(_ name: String, _ extra: [String] = []) throws -> (status: Int32, output: String, folder: String)
{
    let folder = Scratch.directory("web")
    let process = Process()
    process.executableURL = URL(fileURLWithPath: python)
    process.arguments = [scriptsDirectory + "/" + name, "--bin", productsDirectory, "--out", folder] + extra
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self), folder)
}

@Suite("repd-web end to end", .serialized)
struct BrowserTests {
    @Test(
        "in a real headless Chromium the page shows every rep as repd announces it (the latency printed; none 5 s late), says when repd-web or repd stops, recovers when they return, loads nothing from another origin, and ?theme= wins over the system's colours",
        .enabled(
            if: haveBrowser,
            "needs /usr/bin/chromium, /usr/bin/chromedriver and python3-selenium (scripts/install-deps test)"),
        .timeLimit(.minutes(2)))
    func pageInABrowser() throws {
        // REPD_WEB_SCREENSHOT=docs/repd-web.png also writes the README's screenshot.
        let docs = ProcessInfo.processInfo.environment["REPD_WEB_SCREENSHOT"].map { ["--docs-screenshot", $0] } ?? []
        let run = try runScript("display_test.py", docs)
        print("display_test.py (screenshots in \(run.folder), kept with REPD_KEEP_TEST_FILES=1):\n\(run.output)")
        #expect(run.status == 0, "\(run.output)")
        #expect(FileManager.default.fileExists(atPath: run.folder + "/display.png"))
    }

    @Test(
        "in a real headless Chromium the 'sensor lost' banner appears when repd's accelerometer (umockdev) is removed, and goes when it is back",
        .enabled(
            if: haveBrowser,
            "needs /usr/bin/chromium, /usr/bin/chromedriver and python3-selenium (scripts/install-deps test)"),
        .enabled(
            if: haveUmockdev,
            "needs umockdev-wrapper and its Python API (scripts/install-deps test installs umockdev, gir1.2-umockdev-1.0, python3-gi)"
        ),
        .timeLimit(.minutes(1)))
    func sensorLostBanner() throws {
        let run = try runScript("sensor_test.py", ["--device", wristDevice])
        print("sensor_test.py (logs and screenshot in \(run.folder), kept with REPD_KEEP_TEST_FILES=1):\n\(run.output)")
        #expect(run.status == 0, "\(run.output)")
        #expect(FileManager.default.fileExists(atPath: run.folder + "/display-sensor-lost.png"))
    }

    @Test(
        "100 event streams at once, one that stops reading (disconnected, nobody waits), repd restarting, bad URLs (404)",
        .enabled(if: havePython, "needs /usr/bin/python3"),
        .timeLimit(.minutes(2)))
    func manyBrowsers() throws {
        let run = try runScript("clients_test.py", ["--clients", "100"])
        print("clients_test.py (logs in \(run.folder), kept with REPD_KEEP_TEST_FILES=1):\n\(run.output)")
        #expect(run.status == 0, "\(run.output)")
    }
}
