/// Command-line arguments as the programs hand them to ArgumentParser.
public enum CommandLineArguments {
    /// `arguments` with a negative number after a long option attached to it (`--speed -5` → `--speed=-5`).
    ///
    /// ArgumentParser takes `-5` for a cluster of short options and reports the option before it as missing its
    /// value ("Missing value for '--speed <speed>'"), so the program's own message ("--speed must be a positive
    /// number") was never reached. Attached, the value is parsed and validated like any other. A value such as
    /// `-1,0,0` (a vector) counts too; nothing after `--` is touched.
    public static func attachingNegativeNumbers(_ arguments: [String]) -> [String] {
        var result: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if argument == "--" {
                result += arguments[index...]
                break
            }
            if argument.hasPrefix("--"), argument.count > 2, !argument.contains("="), index + 1 < arguments.count,
                isNegativeNumber(arguments[index + 1])
            {
                result.append(argument + "=" + arguments[index + 1])
                index += 2
                continue
            }
            result.append(argument)
            index += 1
        }
        return result
    }

    /// Whether `text` starts as a negative number does: `-` then a digit or a point (`-5`, `-0.5`, `-.5`, `-1,0,0`).
    static func isNegativeNumber(_ text: String) -> Bool {
        let scalars = Array(text.unicodeScalars.prefix(2))
        guard scalars.count == 2, scalars[0] == "-" else { return false }
        return ("0"..."9").contains(scalars[1]) || scalars[1] == "."
    }
}
