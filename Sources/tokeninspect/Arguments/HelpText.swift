#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `--help`, the usage line and the usage error, written from a command's
/// `CommandSpec` in the layout its golden texts and man page hold: an
/// OVERVIEW, the USAGE, then ARGUMENTS, OPTIONS and SUBCOMMANDS with their
/// text in a column from the 27th character, wrapped to the terminal.
enum HelpText {
    static let labelColumn = 26
    /// Options past this many are folded into `[<options>]` in a usage line,
    /// all but the required ones.
    static let listedOptionsLimit = 12

    static let helpLine = "Show help information."
    static let versionLine = "Show the version."

    /// `$COLUMNS`, else the terminal's width, else 80.
    static var screenWidth: Int {
        if let columns = getenv("COLUMNS").flatMap({ Int(String(cString: $0)) }), columns > labelColumn { return columns }
        var size = winsize()
        if ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, Int(size.ws_col) > labelColumn { return Int(size.ws_col) }
        return 80
    }

    static func commandName(_ path: [CommandSpec]) -> String { path.map(\.name).joined(separator: " ") }

    /// The usage lines: the command's own, or a synopsis of its options and arguments.
    static func usage(_ path: [CommandSpec]) -> String {
        let command = path[path.count - 1]
        if let usage = command.usage { return usage }
        let name = commandName(path)
        if !command.subcommands.isEmpty { return "\(name) <subcommand>" }
        let synopses: [String]
        if command.options.count + command.arguments.count > listedOptionsLimit {
            synopses = ["[<options>]"] + command.options.filter(\.isRequired).map(synopsis) + command.arguments.map(synopsis)
        } else {
            synopses = command.options.map(synopsis) + command.arguments.map(synopsis)
        }
        return ([name] + synopses).joined(separator: " ")
    }

    private static func synopsis(_ option: OptionSpec) -> String {
        switch option.kind {
        case .flag: "[\(option.label)]"
        case .single: option.isRequired ? option.label : "[\(option.label)]"
        case .repeating: "[\(option.label) ...]"
        }
    }

    private static func synopsis(_ argument: ArgumentSpec) -> String {
        argument.isRepeating ? "[\(argument.label) ...]" : "[\(argument.label)]"
    }

    /// What `--help` prints for the command at the end of `path`.
    static func help(_ path: [CommandSpec], width: Int = screenWidth) -> String {
        let command = path[path.count - 1]
        var out = ""
        var overview = command.abstract
        if !command.discussion.isEmpty { overview += "\n\n" + command.discussion }
        if !overview.isEmpty { out += wrapped("OVERVIEW: \(overview)", to: width) + "\n\n" }
        out += "USAGE: " + hangingIndent(usage(path)) + "\n\n"
        var sections: [String] = []
        if !command.arguments.isEmpty {
            sections.append(
                section("ARGUMENTS", command.arguments.map { ($0.label, describe($0.help, values: [], default: $0.defaultValue)) }, width)
            )
        }
        var options = command.options.map { ($0.label, describe($0.help, values: $0.allowedValues, default: $0.defaultValue)) }
        options += [("--version", versionLine), ("-h, --help", helpLine)]
        sections.append(section("OPTIONS", options, width))
        if !command.subcommands.isEmpty {
            let rows = command.subcommands.map { subcommand in
                (subcommand.name + (subcommand.name == command.defaultSubcommand ? " (default)" : ""), subcommand.abstract)
            }
            sections.append(section("SUBCOMMANDS", rows, width))
        }
        out += sections.joined(separator: "\n")
        if !command.subcommands.isEmpty {
            let names = [path[0].name, "help"] + path.dropFirst().map(\.name)
            out += "\n  See '\(names.joined(separator: " ")) <subcommand>' for detailed help."
        }
        return out
    }

    /// "Error: …", the option's help line when the error is about one, and the usage.
    static func error(_ message: String, option: OptionSpec? = nil, path: [CommandSpec]) -> String {
        var out = "Error: \(message)\n"
        if let option { out += "Help:  \(option.label)  \(option.help)\n" }
        out += "Usage: \(hangingIndent(usage(path)))\n"
        out += "  See '\(commandName(path)) --help' for more information.\n"
        return out
    }

    /// An option's text with what it accepts and its default, as "(values: a, b; default: a)".
    static func describe(_ help: String, values: [String], default defaultValue: String?) -> String {
        let defaultValue = defaultValue ?? ""
        let suffix: String
        switch (values.isEmpty, defaultValue.isEmpty) {
        case (true, true): suffix = ""
        case (false, true): suffix = "(values: \(values.joined(separator: ", ")))"
        case (true, false): suffix = "(default: \(defaultValue))"
        case (false, false): suffix = "(values: \(values.joined(separator: ", ")); default: \(defaultValue))"
        }
        return [help, suffix].filter { !$0.isEmpty }.joined(separator: " ")
    }

    private static func section(_ title: String, _ rows: [(label: String, text: String)], _ width: Int) -> String {
        var out = "\(title):\n"
        for (label, text) in rows {
            let padded = "  " + label
            let column = wrapped(text, to: width, indent: labelColumn)
            if text.isEmpty {
                out += padded + "\n"
            } else if padded.count < labelColumn {
                out += padded + column.dropFirst(padded.count) + "\n"
            } else {
                out += padded + "\n" + column + "\n"
            }
        }
        return out
    }

    /// Later lines of a usage indented under the first one's text ("USAGE: " is seven wide).
    private static func hangingIndent(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).joined(separator: "\n" + String(repeating: " ", count: 7))
    }

    /// `text` in lines of at most `width` characters, each indented by
    /// `indent`, broken at the last space that fits (a word longer than a
    /// line stands alone); the text's own line breaks are kept.
    static func wrapped(_ text: String, to width: Int, indent: Int = 0) -> String {
        let columns = max(width - indent, 1)
        var lines: [Substring] = []
        var rest = text[...]
        while true {
            let chunk = rest.prefix(columns)
            if let lineBreak = chunk.lastIndex(of: "\n") {
                lines += rest[..<lineBreak].split(separator: "\n", omittingEmptySubsequences: false)
                rest = rest[rest.index(after: lineBreak)...]
            } else if chunk.endIndex == rest.endIndex {
                lines.append(rest)
                break
            } else if let space = chunk.lastIndex(of: " ") {
                lines.append(rest[..<space])
                rest = rest[rest.index(after: space)...]
            } else if let space = rest.firstIndex(of: " ") {
                lines.append(rest[..<space])
                rest = rest[rest.index(after: space)...]
            } else {
                lines.append(rest)
                break
            }
        }
        let margin = String(repeating: " ", count: indent)
        return lines.map { $0.isEmpty ? "" : margin + $0 }.joined(separator: "\n")
    }
}
