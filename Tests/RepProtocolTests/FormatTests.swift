import RepProtocol

#if canImport(Glibc)
    import Glibc
#endif
import Testing

@Suite("RepProtocol number formatting")
struct FormatTests {
    @Test(
        "format gives fixed decimals for ordinary numbers",
        arguments: [
            (3.14159, 2, "3.14"), (-2.5, 1, "-2.5"), (-0.004, 2, "0.00"), (1234.5, 0, "1235"), (0.05, 3, "0.050"),
        ])
    func ordinary(value: Double, decimals: Int, expected: String) {
        #expect(format(value, decimals: decimals) == expected)
    }

    @Test(
        "format does not trap on huge, non-finite or over-precise numbers, nor on odd decimal counts",
        arguments: [
            (1e300, 1, "1e+300"), (-1e300, 2, "-1e+300"),
            (Double.greatestFiniteMagnitude, 0, "1.7976931348623157e+308"),
            (9.3e18, 0, "9.3e+18"), (1e6, 15, "1000000.0"), (Double.infinity, 1, "inf"), (-Double.infinity, 1, "-inf"),
            (Double.nan, 0, "nan"), (1.25, -3, "1"), (1.5, 400, "1.50000000000000000"),
        ])
    func extremes(value: Double, decimals: Int, expected: String) {
        #expect(format(value, decimals: decimals) == expected)
    }
}

@Suite("default socket path")
struct DefaultSocketPathTests {
    // "UID" stands for getuid(): Swift 6.0.3 (Debian trixie) crashes on string interpolation in @Test arguments.
    @Test(
        "without a runtime folder the daemon falls back to $TMPDIR/repd-UID, or /tmp/repd-UID",
        arguments: [
            (["TMPDIR": "/scratch/t/"], "/scratch/t/repd-UID/events.sock"),
            ([:], "/tmp/repd-UID/events.sock"),
            (["TMPDIR": "", "XDG_RUNTIME_DIR": ""], "/tmp/repd-UID/events.sock"),
            (["XDG_RUNTIME_DIR": "/run/user/7", "TMPDIR": "/x"], "/run/user/7/repd/events.sock"),
        ] as [([String: String], String)])
    func fallback(environment: [String: String], expected: String) {
        let expected = expected.replacing("UID", with: String(getuid()))
        #expect(DefaultSocketPath.forDaemon(environment: { environment[$0] }) == expected)
    }
}
