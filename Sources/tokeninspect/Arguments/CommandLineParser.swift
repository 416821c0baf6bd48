import EntitlementTokens

/// Reads the words of a command line against a `CommandSpec` tree.
///
/// Options are long (`--name value`, `--name=value`); `-h` is the one short
/// name. An option that takes one value and is given twice is a usage error,
/// not "the last one wins": two readings of one command line are refused.
/// A value that starts with '-' is taken only with `=`, or by an option
/// declared `takesDashedValue`; `-` alone is stdin and `--` ends the options.
enum CommandLineParser {
    /// What the command line asks for.
    enum Request {
        case run(ParsedArguments)
        case help([CommandSpec])
        case version
    }

    static func parse(_ words: [String], root: CommandSpec) throws(UsageError) -> Request {
        var path = [root]
        var index = 0
        // Down the groups: a subcommand's name, else the group's default, else its help.
        while !path[path.count - 1].subcommands.isEmpty {
            let group = path[path.count - 1]
            if index < words.count {
                let word = words[index]
                if let request = helpOrVersion(word, path: path) { return request }
                if path.count == 1, word == "help" { return .help(try helpPath(Array(words[(index + 1)...]), root: root)) }
                if let subcommand = group.subcommand(named: word) {
                    path.append(subcommand)
                    index += 1
                    continue
                }
            }
            if let name = group.defaultSubcommand, let subcommand = group.subcommand(named: name) {
                path.append(subcommand)
                continue
            }
            if index == words.count { return .help(path) }
            throw UsageError(path: path, message: "Unexpected argument \(TerminalText.quoted(words[index]))")
        }
        let words = words[index...]
        // Help and the version win over anything else on the line, as people expect of -h.
        for word in words.prefix(while: { $0 != "--" }) {
            if let request = helpOrVersion(word, path: path) { return request }
        }
        return .run(try options(words, path: path))
    }

    private static func helpOrVersion(_ word: String, path: [CommandSpec]) -> Request? {
        switch word {
        case "-h", "--help": .help(path)
        case "--version": .version
        default: nil
        }
    }

    /// `tokeninspect help mint token`: the path the names lead to.
    private static func helpPath(_ names: [String], root: CommandSpec) throws(UsageError) -> [CommandSpec] {
        var path = [root]
        for name in names {
            guard let subcommand = path[path.count - 1].subcommand(named: name) else {
                throw UsageError(path: path, message: "Unknown subcommand \(TerminalText.quoted(name))")
            }
            path.append(subcommand)
        }
        return path
    }

    private static func options(_ words: ArraySlice<String>, path: [CommandSpec]) throws(UsageError) -> ParsedArguments {
        let command = path[path.count - 1]
        var parsed = ParsedArguments(path: path)
        var index = words.startIndex
        var optionsEnded = false
        while index < words.endIndex {
            let word = words[index]
            index += 1
            if optionsEnded || word == "-" || !word.hasPrefix("-") {
                guard let argument = command.arguments.first, argument.isRepeating || parsed.positionals.isEmpty else {
                    throw UsageError(path: path, message: "Unexpected argument \(TerminalText.quoted(word))")
                }
                parsed.addPositional(word)
                continue
            }
            if word == "--" {
                optionsEnded = true
                continue
            }
            let body = word.hasPrefix("--") ? word.dropFirst(2) : word.dropFirst()
            let equals = word.hasPrefix("--") ? body.firstIndex(of: "=") : nil
            let name = String(equals.map { body[..<$0] } ?? body)
            let inlineValue = equals.map { String(body[body.index(after: $0)...]) }
            guard word.hasPrefix("--"), let option = command.option(named: name) else {
                throw UsageError(path: path, message: unknownOption(word.hasPrefix("--") ? "--\(name)" : word, in: command))
            }
            switch option.kind {
            case .flag:
                if let inlineValue {
                    throw UsageError(
                        path: path,
                        message: "The option '--\(name)' does not take any value, but \(TerminalText.quoted(inlineValue)) was specified."
                    )
                }
                if !parsed.isGiven(name) { parsed.add("", for: option) }
            case .single, .repeating:
                let value: String
                if let inlineValue {
                    value = inlineValue
                } else if index < words.endIndex, option.takesDashedValue || words[index] == "-" || !words[index].hasPrefix("-") {
                    value = words[index]
                    index += 1
                } else {
                    throw UsageError(path: path, message: "Missing value for '\(option.label)'", option: option)
                }
                if option.kind == .single, parsed.isGiven(name) {
                    throw UsageError(path: path, message: "'--\(name)' is given more than once; it takes one value", option: option)
                }
                try check(value, for: option, path: path)
                parsed.add(value, for: option)
            }
        }
        for option in command.options where option.isRequired && !parsed.isGiven(option.name) {
            throw UsageError(path: path, message: "Missing expected argument '\(option.label)'", option: option)
        }
        return parsed
    }

    private static func check(_ value: String, for option: OptionSpec, path: [CommandSpec]) throws(UsageError) {
        let valid: Bool
        switch option.value {
        case .text: valid = true
        case .integer: valid = Int64(value) != nil
        case .number: valid = Double(value) != nil
        case .oneOf(let allowed):
            guard allowed.contains(value) else {
                let listed = allowed.map { "'\($0)'" }
                let choices = listed.count > 1 ? listed.dropLast().joined(separator: ", ") + " or " + listed[listed.count - 1] : listed.joined()
                throw UsageError(
                    path: path,
                    message: "The value \(TerminalText.quoted(value)) is invalid for '\(option.label)'. Please provide one of \(choices).",
                    option: option
                )
            }
            valid = true
        }
        if !valid {
            throw UsageError(path: path, message: "The value \(TerminalText.quoted(value)) is invalid for '\(option.label)'", option: option)
        }
    }

    /// "Unknown option '--kye'. Did you mean '--key'?": the nearest option
    /// within three edits, as people mistype.
    static func unknownOption(_ written: String, in command: CommandSpec) -> String {
        let names = command.options.map { "--\($0.name)" } + ["--help", "--version"]
        let nearest = names.map { (name: $0, distance: editDistance($0, written)) }
            .filter { $0.distance < 4 }
            .min { $0.distance < $1.distance }
        guard let nearest else { return "Unknown option \(TerminalText.quoted(written))" }
        return "Unknown option \(TerminalText.quoted(written)). Did you mean '\(nearest.name)'?"
    }

    /// Levenshtein distance over characters; two rows, so linear memory.
    static func editDistance(_ left: String, _ right: String) -> Int {
        let left = Array(left)
        let right = Array(right)
        guard !left.isEmpty, !right.isEmpty else { return max(left.count, right.count) }
        var previous = Array(0...right.count)
        var current = [Int](repeating: 0, count: right.count + 1)
        for (row, leftCharacter) in left.enumerated() {
            current[0] = row + 1
            for (column, rightCharacter) in right.enumerated() {
                let substitution = previous[column] + (leftCharacter == rightCharacter ? 0 : 1)
                current[column + 1] = min(substitution, previous[column + 1] + 1, current[column] + 1)
            }
            swap(&previous, &current)
        }
        return previous[right.count]
    }
}

/// A command line the program cannot take: printed with the command's usage, exit status 64.
struct UsageError: Error {
    var path: [CommandSpec]
    var message: String
    /// The option the message is about, whose help line is printed with it.
    var option: OptionSpec? = nil
}

/// A check of what was given together that failed (`--fingerprint` with
/// `--device-id`): reported like a `UsageError`, with the running command's usage.
struct ValidationError: Error, CustomStringConvertible {
    var message: String
    init(_ message: String) { self.message = message }
    var description: String { message }
}

/// The process's exit status, thrown by a command that has said why already.
struct ExitCode: Error {
    var rawValue: Int32
    init(_ rawValue: Int32) { self.rawValue = rawValue }
}
