import ArgumentParser
import Foundation
import Testing

@testable import TokenGate

/// `tokengate --help` keeps its paragraphs (issue 23 item 7): swift-argument-parser
/// re-wraps every line of a help text to the terminal, but keeps the hard
/// newlines of the source, so a paragraph written with newlines leaves a
/// stub ("…See deploy/ and the" / "README section…") at any width but the
/// author's. The built executable is run as a person would, at two widths
/// (`COLUMNS`), and its prose must read as one greedy wrap: no line ends
/// where the next line's first word would still have fitted.
@Suite struct GateHelpTests {
    static let widths = [80, 120]
    static let commands: [[String]] = [["--help"], ["serve", "--help"], ["check", "--help"], ["debugger", "--help"]]

    /// The help as `tokengate` prints it to a terminal `columns` wide.
    static func help(_ arguments: [String], columns: Int) throws -> String {
        let binary = try #require(ExecutableTests.binary, "the tokengate executable is not built (swift build --product tokengate)")
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["COLUMNS"] = "\(columns)"
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "tokengate \(arguments.joined(separator: " "))")
        return String(decoding: data, as: UTF8.self)
    }

    /// Each place where `help` breaks a line that the wrapper would have
    /// filled, as "line ⏎ next line".
    ///
    /// The wrapper keeps one column free: it moves a word down when the line,
    /// a space and the word reach `width`. So a break is a hard newline when
    /// the next word would have fitted with room to spare. Checked in the
    /// prose above `USAGE:` (not where a line or the next is indented: those
    /// are tables and examples, kept as written) and in each entry of
    /// `OPTIONS:` and `SUBCOMMANDS:` (its continuation lines are indented to
    /// the help column; a label alone on its line is not prose).
    static func raggedBreaks(_ help: String, width: Int) -> [String] {
        let lines = help.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let helpColumn = String(repeating: " ", count: 26)
        var found: [String] = []
        var section = "discussion"
        for (line, next) in zip(lines, lines.dropFirst()) {
            if line.hasPrefix("USAGE:") { section = "usage" }
            if line == "OPTIONS:" || line == "SUBCOMMANDS:" {
                section = "entries"
                continue
            }
            guard !line.trimmingCharacters(in: .whitespaces).isEmpty,
                let word = next.split(separator: " ").first
            else { continue }
            switch section {
            case "discussion":
                guard !line.hasPrefix(" "), !next.hasPrefix(" ") else { continue }
            case "entries":
                guard next.hasPrefix(helpColumn) else { continue }
                // `  --resource-header <NAME>` alone: its help starts on the next line.
                if line.hasPrefix("  -"), line.dropFirst(2).range(of: "\\S {2,}\\S", options: .regularExpression) == nil { continue }
            default:
                continue
            }
            if line.count + 1 + word.count < width { found.append("\(line) ⏎ \(next)") }
        }
        return found
    }

    @Test(arguments: commands, widths)
    func paragraphsAreNotBrokenMidSentence(arguments: [String], width: Int) throws {
        let help = try Self.help(arguments, columns: width)
        #expect(help.contains("USAGE: tokengate"))
        for ragged in Self.raggedBreaks(help, width: width) {
            Issue.record("tokengate \(arguments.joined(separator: " ")) at \(width) columns breaks a paragraph: \(ragged)")
        }
        // The wrapper really wrapped to this width (a COLUMNS it ignored would pass the check above).
        // (The usage line is never wrapped.)
        let longest = help.split(separator: "\n").filter { !$0.hasPrefix("USAGE:") }.map(\.count).max() ?? 0
        #expect(longest <= width && longest > width - 12, "longest line \(longest) at \(width) columns")
    }

    /// Tables and examples (indented lines of the source) are printed as
    /// written: each fits the narrower width, so the wrapper never cuts one.
    @Test(arguments: widths)
    func indentedLinesArePrintedAsWritten(width: Int) throws {
        let sources: [([String], String)] = [
            (["--help"], TokenGateCommand.configuration.discussion),
            (["serve", "--help"], Serve.configuration.discussion),
            (["check", "--help"], CheckCommand.configuration.discussion),
            (["debugger", "--help"], Debugger.configuration.discussion),
        ]
        for (arguments, discussion) in sources {
            let printed = Set(try Self.help(arguments, columns: width).split(separator: "\n").map(String.init))
            for line in discussion.split(separator: "\n").map(String.init) where line.hasPrefix(" ") {
                #expect(printed.contains(line), "tokengate \(arguments.joined(separator: " ")) at \(width) columns cut: \(line)")
            }
        }
    }

    /// The check itself finds the stubs of the text this test was written
    /// against (`tokengate --help` at 120 columns before the fix).
    @Test func theCheckFindsAParagraphWrittenWithNewlines() {
        let before = """
            OVERVIEW: Verify TV Everywhere media tokens for nginx, Traefik, Caddy, HAProxy or Envoy before playback.

            Answers: 200 allow, 401 no usable token, 403 refused token, 503 replay check
            unavailable, 500 misconfigured proxy; X-Token-Status says why. See deploy/ and the
            README section "Put it in front of your media server".

            USAGE: tokengate <subcommand>

            OPTIONS:
              --version               Show the version.
              --leeway <SECONDS>      Tolerated clock skew each way,
                                      in seconds. (default: 30.0)
            """
        let found = Self.raggedBreaks(before, width: 120)
        #expect(found.count == 3, "\(found)")
        #expect(found.first?.hasPrefix("Answers: 200 allow") == true)
        #expect(found.last?.hasPrefix("  --leeway") == true)
        #expect(Self.raggedBreaks(before, width: 80).count == 1, "at 80 only the option breaks early: \(Self.raggedBreaks(before, width: 80))")
    }
}
