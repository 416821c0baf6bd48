import EntitlementTokens

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs a command line: the machine-facing words first (shell completion,
/// the machine-readable help), then the parse, then the command; and turns
/// what was thrown into the exit status of docs/DESIGN.md#exit-codes.
enum CommandLineRunner {
    static let usageStatus: Int32 = 64

    static func run(_ words: [String], root: CommandSpec, version: String) -> Int32 {
        switch words.first {
        case "--generate-completion-script":
            guard words.count == 2, let script = ShellCompletion.script(for: words[1], root: root) else {
                return reportUsage("--generate-completion-script takes one of: \(ShellCompletion.shells.joined(separator: ", "))", path: [root])
            }
            return write(script)
        case ShellCompletion.requestWord:
            let candidates = ShellCompletion.candidates(Array(words.dropFirst()), root: root)
            return write(candidates.map { $0 + "\n" }.joined())
        case "--experimental-dump-help":
            return write(HelpDump.json(root) + "\n")
        default:
            break
        }
        let request: CommandLineParser.Request
        do {
            request = try CommandLineParser.parse(words, root: root)
        } catch {
            return reportUsage(error.message, option: error.option, path: error.path)
        }
        switch request {
        case .help(let path):
            return write(HelpText.help(path) + "\n")
        case .version:
            return write(version + "\n")
        case .run(let parsed):
            do {
                try parsed.command.run?(parsed)
                return 0
            } catch let error as ValidationError {
                return reportUsage(error.message, path: parsed.path)
            } catch let error as ExitCode {
                return error.rawValue
            } catch {
                OutputStream.standardError.write("tokeninspect: error: \(String(describing: error))\n")
                OutputStream.standardError.flush()
                return 1
            }
        }
    }

    private static func write(_ text: String) -> Int32 {
        // The program's own text (help, scripts), or completion candidates,
        // which a shell reads, not a person: a file name must reach it unchanged.
        OutputStream.standardOutput.write(TerminalText(stringLiteral: text))
        OutputStream.standardOutput.flush()
        return 0
    }

    /// The message was escaped where it was made: by the parser for the words
    /// it quotes, by each command for the values its checks name.
    static func reportUsage(_ message: String, option: OptionSpec? = nil, path: [CommandSpec]) -> Int32 {
        OutputStream.standardError.write(TerminalText(stringLiteral: HelpText.error(message, option: option, path: path)))
        OutputStream.standardError.flush()
        return usageStatus
    }
}
