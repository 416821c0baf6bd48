import Foundation
import IntegrationSupport
import Testing

/// `docs/man/tokeninspect.1` says what `--help` says (docs/man/README.md):
/// `scripts/man-pages` writes it from the binary's own definitions, and here
/// the built binary's `--help` of every command is compared with the page,
/// option by option (value name, allowed values, default), with the
/// exit-status table; and the generator, run against the built binaries,
/// must write exactly the committed pages, so a page not regenerated fails.
@Suite struct ManPageTests {
    static func page(_ name: String) throws -> String {
        try String(contentsOf: CLI.packageRoot.appendingPathComponent("docs/man/\(name).1"), encoding: .utf8)
    }

    @Test func everyOptionOfEveryCommandIsInTheManPageAsHelpShowsIt() throws {
        let comparison = ManPageComparison(binaryName: "tokeninspect", page: try Self.page("tokeninspect")) { arguments in
            let result = try CLI.run(arguments)
            try #require(result.status == 0, "tokeninspect \(arguments): \(result.stderr)")
            return result.stdout
        }
        let commands = try comparison.commands().map { $0.joined(separator: " ") }
        // The walk reaches the nested subcommands: a help it cannot read must not pass as "nothing to compare".
        for expected in ["", "inspect", "verify", "mint", "mint token", "mint software-statement", "mint cdn", "metadata", "har"] {
            #expect(commands.contains(expected), "\(commands)")
        }
        for problem in try comparison.problems() {
            Issue.record("docs/man/tokeninspect.1: \(problem) (regenerate it: scripts/man-pages)")
        }
    }

    /// Every status the source exits with is in the table `--help` and the man page print.
    @Test func everyExitCodeTheSourceUsesIsInTheTable() throws {
        let table = ManPageComparison.exitStatus(of: try CLI.run(["--help"]).stdout).map(\.code)
        #expect(table == ["0", "1", "2", "64", "65"], "\(table)")
        let sources = CLI.packageRoot.appendingPathComponent("Sources/tokeninspect")
        var used = Set<String>()
        for file in try FileManager.default.contentsOfDirectory(atPath: sources.path) where file.hasSuffix(".swift") {
            let text = try String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8)
            for match in text.matches(of: /(?:ExitCode|\.finished)\((\d+)\)/) { used.insert(String(match.1)) }
        }
        #expect(used.count >= 3, "\(used)")
        for code in used { #expect(table.contains(code), "tokeninspect exits \(code), which its exit-status table does not name") }
    }

    /// `scripts/man-pages --check` against the binaries these tests run: a
    /// committed page that is not what the generator writes fails, naming its first stale line.
    @Test func theCommittedPagesAreWhatTheGeneratorWrites() throws {
        let binaries = CLI.binary.deletingLastPathComponent().path
        let result = try CLI.run([], shell: ["python3", "scripts/man-pages", "--check", "--bin", binaries])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("man-pages: docs/man/*.1 say what --help says"), "\(result.stdout)")
    }
}
