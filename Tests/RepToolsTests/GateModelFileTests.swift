import Foundation
@testable import RepDetection
import RepTools
import Testing

/// `repctl eval --gate FILE` reads the models `scripts/train-gate` writes for cross-validation.
@Suite("Gate model files")
struct GateModelFileTests {
    /// Two stumps on `log_rms` (feature 2) and `step_rhythm` (feature 13), as train-gate writes them.
    let twoStumps = """
        # two trees of depth 1
        feature 2 -1 -1 13 -1 -1
        threshold -1.5 0 0 0.3 0 0
        left 1 0 0 4 0 0
        right 2 0 0 5 0 0
        score 0 -1 1 0 0.5 -2
        roots 0 3
        offset 0.25
        """

    @Test("a model of two trees adds the prior and each tree's leaf score, then takes the logistic")
    func twoTreesAddUp() throws {
        let model = try GateModelFile.parse(twoStumps, file: "two.model")
        #expect(model.roots == [0, 3])
        var features = ExerciseGateFeatures()
        features.logRMS = -1  // > -1.5: +1
        features.stepRhythm = 0.5  // > 0.3: -2
        let p = model.probability(of: features)
        let expected = 1 / (1 + exp(-(0.25 + 1 - 2)))
        #expect(abs(p - expected) < 1e-12, "\(p) for \(expected)")
        features.logRMS = -2  // <= -1.5: -1
        features.stepRhythm = 0  // <= 0.3: +0.5
        #expect(abs(model.probability(of: features) - 1 / (1 + exp(-(0.25 - 1 + 0.5)))) < 1e-12)
    }

    @Test("a missing line, a word that is no number, a fractional index and a loop are refused with the reason")
    func badFilesAreRefused() {
        func reason(_ text: String) -> String? {
            do {
                _ = try GateModelFile.parse(text, file: "bad.model")
                return nil
            } catch {
                return "\(error.line): \(error.reason)"
            }
        }
        let noOffset = twoStumps.replacingOccurrences(of: "offset 0.25", with: "")
        #expect(reason(noOffset)?.contains("'offset …' is missing") == true, "\(reason(noOffset) ?? "parsed")")
        let word = twoStumps.replacingOccurrences(of: "score 0 -1", with: "score 0 x")
        #expect(reason(word) == "6: 'x' is not a number")
        let fraction = twoStumps.replacingOccurrences(of: "roots 0 3", with: "roots 0 2.5")
        #expect(reason(fraction)?.contains("not a whole number") == true, "\(reason(fraction) ?? "parsed")")
        let loop = twoStumps.replacingOccurrences(of: "left 1 0 0 4", with: "left 0 0 0 4")
        #expect(reason(loop)?.contains("not a valid model") == true, "\(reason(loop) ?? "parsed")")
        let rootOutside = twoStumps.replacingOccurrences(of: "roots 0 3", with: "roots 0 9")
        #expect(reason(rootOutside)?.contains("not a valid model") == true)
    }

    @Test("the built-in model is valid and the open model lets everything through")
    func builtInModels() {
        #expect(ExerciseGateModel.trained.isValid)
        let p = ExerciseGateModel.trained.probability(of: ExerciseGateFeatures())
        #expect(p > 0 && p < 1, "\(p)")
        #expect(ExerciseGateModel.open.probability(of: ExerciseGateFeatures()) == 1)
    }
}
