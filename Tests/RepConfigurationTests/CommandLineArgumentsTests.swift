import RepConfiguration
import Testing

@Suite("a negative number after an option reaches the option")
struct CommandLineArgumentsTests {
    @Test(
        "a negative number (or vector) after a long option is attached to it; anything else, and all after --, is left as it is",
        arguments: [
            (["--speed", "-5", "--demo"], ["--speed=-5", "--demo"]),
            (["history", "--since", "-1"], ["history", "--since=-1"]),
            (["--gravity", "-1,0,0"], ["--gravity=-1,0,0"]),
            (["--x", "-.5", "--y", "-0.5"], ["--x=-.5", "--y=-0.5"]),
            (["--speed=-5"], ["--speed=-5"]),
            (["--json", "-h"], ["--json", "-h"]),
            (["--speed", "--demo"], ["--speed", "--demo"]),
            (["--", "--speed", "-5"], ["--", "--speed", "-5"]),
            (["-v", "-5"], ["-v", "-5"]),
            (["--speed"], ["--speed"]),
        ])
    func attaches(arguments: [String], expected: [String]) {
        #expect(CommandLineArguments.attachingNegativeNumbers(arguments) == expected)
    }
}
