import Foundation
import FuzzTargets
import Testing

/// Every committed fuzz input (seeds, and inputs that once crashed) goes through its target again: what was fixed
/// stays fixed. scripts/fuzz.sh does the fuzzing itself.
@Suite("Fuzz corpus replay")
struct CorpusReplayTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("corpus")

    @Test("every target has a seed corpus, and every input runs through its target", arguments: FuzzTarget.allCases)
    func replay(target: FuzzTarget) throws {
        let folder = Self.corpus.appendingPathComponent(target.rawValue)
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        #expect(!files.isEmpty, "seed inputs for \(target.rawValue)")
        for file in files {
            let data = try Data(contentsOf: folder.appendingPathComponent(file))
            data.withUnsafeBytes { target.run($0) }
        }
    }

    @Test("random inputs do not crash any target")
    func randomInputs() {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for target in FuzzTarget.allCases {
            for length in [0, 1, 2, 3, 4, 7, 16, 64, 300] {
                var bytes = [UInt8](repeating: 0, count: length)
                for i in bytes.indices {
                    state = state &* 6364136223846793005 &+ 1442695040888963407
                    bytes[i] = UInt8(truncatingIfNeeded: state >> 33)
                }
                bytes.withUnsafeBytes { target.run($0) }
            }
        }
    }
}
