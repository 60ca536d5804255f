import FuzzTargets

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

#if FUZZING
    /// libFuzzer's driver (from libclang_rt.fuzzer_no_main, linked by scripts/fuzz.sh).
    @_silgen_name("LLVMFuzzerRunDriver")
    func LLVMFuzzerRunDriver(
        _ argc: UnsafeMutablePointer<Int32>,
        _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
        _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
    ) -> Int32

    /// The target chosen by REPD_FUZZ_TARGET (set once, before the driver starts).
    nonisolated(unsafe) private var selected: FuzzTarget = .scanType

    /// The fuzzing build's entry point: SwiftPM links an executable's `main` to `<target>_main`, so this takes its
    /// place (and libFuzzer's own `main` is never pulled in) and runs libFuzzer's driver.
    @_cdecl("repd_fuzz_main")
    func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
        let name = getenv("REPD_FUZZ_TARGET").map { String(cString: $0) } ?? ""
        guard let target = FuzzTarget(rawValue: name) else {
            fputs(
                "set REPD_FUZZ_TARGET to one of: \(FuzzTarget.allCases.map(\.rawValue).joined(separator: ", "))\n",
                stderr)
            return 2
        }
        selected = target
        var count = argc
        var vector = argv
        return LLVMFuzzerRunDriver(&count, &vector, fuzzOneInput)
    }

    /// One input, as libFuzzer calls it (also referenced by libFuzzer's runtime itself).
    @_cdecl("LLVMFuzzerTestOneInput")
    func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
        selected.run(UnsafeRawBufferPointer(start: data, count: size))
        return 0
    }
#else
    /// `repd-fuzz TARGET FILE...` replays files through a target (e.g. a crash libFuzzer saved). Built by
    /// scripts/fuzz.sh with -DFUZZING, it is a libFuzzer binary instead: REPD_FUZZ_TARGET names the target.
    @main
    struct FuzzEntry {
        static func main() {
            let arguments = CommandLine.arguments.dropFirst()
            guard let name = arguments.first, let target = FuzzTarget(rawValue: name) else {
                print(
                    "usage: repd-fuzz TARGET FILE...   (targets: \(FuzzTarget.allCases.map(\.rawValue).joined(separator: ", ")))"
                )
                print("fuzzing itself: scripts/fuzz.sh [SECONDS]")
                exit(2)
            }
            for path in arguments.dropFirst() {
                guard let file = fopen(path, "rb") else { continue }
                var bytes: [UInt8] = []
                var buffer = [UInt8](repeating: 0, count: 65536)
                while true {
                    let n = fread(&buffer, 1, buffer.count, file)
                    if n == 0 { break }
                    bytes += buffer[..<n]
                }
                fclose(file)
                bytes.withUnsafeBytes { target.run($0) }
                print("\(path): ok")
            }
        }
    }
#endif
