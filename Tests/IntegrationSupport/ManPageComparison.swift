import Foundation

/// `--help` and the man page compared (docs/man/README.md): the binary is run
/// for the help of every command it lists, subcommands of subcommands too,
/// and each option entry must be in the page's section for that command
/// with its value name and its whole text, "(values: …; default: …)" as
/// `--help` prints it included; the exit-status table that ends the root
/// command's help must be the page's EXIT STATUS. Only `--help` is read, so
/// a subcommand added later is compared without a change here.
public struct ManPageComparison {
    /// Runs the binary with these arguments and gives its standard output.
    public let help: ([String]) throws -> String
    /// The page's mdoc source.
    public let page: String
    public let binaryName: String

    public init(binaryName: String, page: String, help: @escaping ([String]) throws -> String) {
        self.binaryName = binaryName
        self.page = page
        self.help = help
    }

    /// One option or argument of a help text: `--key <PATH>` and its text, joined.
    public struct Entry: Equatable {
        public var names: [String]
        public var valueName: String?
        public var text: String
    }

    /// Every command path, `[]` (the root) first: the names under SUBCOMMANDS, recursively.
    public func commands(_ path: [String] = []) throws -> [[String]] {
        var found = [path]
        for name in Self.subcommands(of: try help(path + ["--help"])) where name != "help" {
            found += try commands(path + [name])
        }
        return found
    }

    /// Each way the page and `--help` disagree, one line each; empty when they agree.
    public func problems() throws -> [String] {
        var problems: [String] = []
        for path in try commands() {
            let title = ([binaryName] + path).joined(separator: " ")
            guard let section = Self.section(titled: title, in: page) else {
                problems.append("\(title): no section .Ss \"\(title)\" in the man page")
                continue
            }
            let items = Self.items(of: section)
            for entry in Self.entries(of: try help(path + ["--help"])) {
                let label = entry.names.joined(separator: ", ") + (entry.valueName.map { " <\($0)>" } ?? "")
                let wanted = entry.names.map { $0.hasPrefix("-") ? ["Fl", String($0.dropFirst())] : ["Ar", $0] }
                guard let item = items.first(where: { item in wanted.allSatisfy(item.hasMacro) }) else {
                    problems.append("\(title) \(label): not in the man page")
                    continue
                }
                if let value = entry.valueName, !item.hasMacro(["Ar", value]) {
                    problems.append("\(title) \(label): the man page names its value \(item.head), not \(value)")
                }
                if let suffix = Self.valuesAndDefault(of: entry.text), !item.text.contains(suffix) {
                    problems.append("\(title) \(label): the man page lacks \(suffix)")
                } else if item.text != entry.text {
                    problems.append("\(title) \(label): --help says \"\(entry.text)\", the man page \"\(item.text)\"")
                }
            }
        }
        let codes = Self.exitStatus(of: try help(["--help"]))
        if codes.isEmpty { problems.append("\(binaryName) --help ends with no exit-status table") }
        let exitSection = Self.section(titled: "EXIT STATUS", in: page).map(Self.items(of:)) ?? []
        for (code, meaning) in codes where !exitSection.contains(where: { $0.head == code && $0.text == meaning }) {
            problems.append("EXIT STATUS: the man page lacks \(code) (\(meaning))")
        }
        if exitSection.count != codes.count {
            problems.append("EXIT STATUS: the man page lists \(exitSection.map(\.head)), --help \(codes.map(\.code))")
        }
        return problems
    }

    // MARK: reading --help

    /// The subcommands a help text lists, `(default)` marks dropped.
    static func subcommands(of help: String) -> [String] {
        var inSection = false
        var names: [String] = []
        for line in help.split(separator: "\n", omittingEmptySubsequences: false) {
            if line == "SUBCOMMANDS:" {
                inSection = true
                continue
            }
            if inSection, line.isEmpty || !line.hasPrefix(" ") { if !names.isEmpty { break } else { continue } }
            if inSection, line.hasPrefix("  "), !line.hasPrefix("   "), let name = line.split(separator: " ").first {
                names.append(String(name))
            }
        }
        return names
    }

    /// The entries of ARGUMENTS, OPTIONS and titled option groups: an entry
    /// starts at a line indented two spaces, its text continues on lines
    /// indented further.
    public static func entries(of help: String) -> [Entry] {
        var entries: [Entry] = []
        var inEntries = false
        for line in help.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            // Section headers are upper case ("OPTIONS:"); a line of prose may end with a colon too.
            if line.hasSuffix(":"), !line.hasPrefix(" "), line == line.uppercased() {
                inEntries = line != "SUBCOMMANDS:"
                continue
            }
            guard inEntries, !line.isEmpty else { continue }
            if line.hasPrefix("   ") {
                guard !entries.isEmpty else { continue }
                let more = line.trimmingCharacters(in: .whitespaces)
                entries[entries.count - 1].text += entries[entries.count - 1].text.isEmpty ? more : " " + more
            } else if line.hasPrefix("  ") {
                // The text starts at the help column when the label leaves room
                // (a space before it), else on the next line.
                let characters = Array(line)
                let sharesLine = characters.count > helpColumn && characters[helpColumn - 1] == " "
                let label = String(characters[2..<(sharesLine ? helpColumn : characters.count)]).trimmingCharacters(in: .whitespaces)
                let text = sharesLine ? String(characters[helpColumn...]).trimmingCharacters(in: .whitespaces) : ""
                entries.append(Self.entry(label: label, text: text))
            }
        }
        return entries
    }

    /// The column where swift-argument-parser starts an entry's text.
    static let helpColumn = 26

    /// `-h, --help`, `--key <PATH>`, `<INPUT>`: names and the value name.
    static func entry(label: String, text: String) -> Entry {
        if label.hasPrefix("<") {
            let name = String(label.dropFirst().prefix { $0 != ">" })
            return Entry(names: [name], valueName: nil, text: text)
        }
        let value = label.range(of: "<").map { String(label[$0.upperBound...].prefix { $0 != ">" }) }
        let names = label.prefix { $0 != "<" }.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        return Entry(names: names.filter { !$0.isEmpty }, valueName: value, text: text)
    }

    /// The "(values: …; default: …)" that ends an entry's text, or its "(default: …)" or "(values: …)".
    static func valuesAndDefault(of text: String) -> String? {
        guard text.hasSuffix(")"), let open = text.range(of: " (values: ", options: .backwards) ?? text.range(of: " (default: ", options: .backwards)
        else { return nil }
        return String(text[text.index(after: open.lowerBound)...])
    }

    /// The table of the "Exit status:" paragraph: each code and its meaning, continuation lines joined.
    public static func exitStatus(of help: String) -> [(code: String, meaning: String)] {
        var rows: [(code: String, meaning: String)] = []
        var inTable = false
        for line in help.split(separator: "\n", omittingEmptySubsequences: false) {
            if line == "Exit status:" {
                inTable = true
                continue
            }
            guard inTable else { continue }
            guard line.hasPrefix("  ") else { break }
            let words = line.split(separator: " ")
            if let code = words.first, code.allSatisfy(\.isNumber), !line.hasPrefix("   ") {
                rows.append((String(code), words.dropFirst().joined(separator: " ")))
            } else if !rows.isEmpty {
                rows[rows.count - 1].meaning += " " + words.joined(separator: " ")
            }
        }
        return rows
    }

    // MARK: reading the page

    /// One `.It` of a page: the macro line's arguments and its text, roff escapes read back.
    struct Item {
        var head: String
        var text: String

        /// True when the macro line has `macro argument`, as whole words (`Fl -key`, not
        /// `Fl -key-id`); an argument of several words (`Ar FILE [ID]`) is matched word by word.
        func hasMacro(_ pair: [String]) -> Bool {
            let words = head.split(separator: " ").map(String.init)
            let wanted = pair.flatMap { $0.split(separator: " ").map(String.init) }
            guard words.count >= wanted.count else { return false }
            return (0...(words.count - wanted.count)).contains { Array(words[$0..<($0 + wanted.count)]) == wanted }
        }
    }

    /// The lines from `.Ss "title"` (or `.Sh "title"`) to the next `.Ss` or `.Sh`.
    static func section(titled title: String, in page: String) -> [String]? {
        let lines = page.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let heads = [".Ss \"\(title)\"", ".Sh \"\(title)\"", ".Sh \(title)"]
        guard let start = lines.firstIndex(where: heads.contains) else { return nil }
        let rest = lines[(start + 1)...]
        let end = rest.firstIndex { $0.hasPrefix(".Ss ") || $0.hasPrefix(".Sh ") } ?? rest.endIndex
        return Array(rest[..<end])
    }

    /// The `.It` items of a section at its first list level, each with the text up to the next macro line.
    static func items(of section: [String]) -> [Item] {
        var items: [Item] = []
        var depth = 0
        var collecting = false
        for line in section {
            if line.hasPrefix(".Bl") {
                depth += 1
                collecting = false
                continue
            }
            if line.hasPrefix(".El") {
                depth -= 1
                continue
            }
            if depth == 1, line.hasPrefix(".It ") {
                items.append(Item(head: unescaped(String(line.dropFirst(4))), text: ""))
                collecting = true
            } else if line.hasPrefix(".") && !line.hasPrefix("\\&") {
                collecting = false
            } else if collecting, depth == 1 {
                let text = unescaped(line)
                items[items.count - 1].text += items[items.count - 1].text.isEmpty ? text : " " + text
            }
        }
        return items
    }

    /// Roff text as read: `\&` dropped, `\ ` a space, `\e` a backslash, `\(dq` a quote, `\[uXXXX]` its character.
    static func unescaped(_ roff: String) -> String {
        var text = roff.replacingOccurrences(of: "\\&", with: "").replacingOccurrences(of: "\\ ", with: " ")
            .replacingOccurrences(of: "\\(dq", with: "\"")
        while let range = text.range(of: #"\\\[u[0-9A-F]{4,5}\]"#, options: .regularExpression) {
            let hex = text[range].dropFirst(3).dropLast()
            text.replaceSubrange(range, with: UInt32(hex, radix: 16).flatMap(Unicode.Scalar.init).map { String($0) } ?? "?")
        }
        return text.replacingOccurrences(of: "\\e", with: "\\")
    }
}
