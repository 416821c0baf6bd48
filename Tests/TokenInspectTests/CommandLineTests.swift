import Foundation
import Testing

/// The CLI's own command-line parser (docs/DESIGN.md#the-command-line), through the binary:
/// one reading per command line, errors that say what to do, escaped words.
@Suite struct CommandLineTests {
    static let token = "@Samples/tokens/valid.txt"

    @Test func anOptionThatTakesOneValueIsRefusedTwice() throws {
        let run = try CLI.run(["verify"] + CLI.sampleFlags + ["--resource", "TNT", "--resource", "CNN", Self.token])
        #expect(run.status == 64)
        #expect(run.stderr.contains("'--resource' is given more than once"), "\(run.stderr)")
        #expect(run.stderr.contains("Help:  --resource <ID>"), "\(run.stderr)")
        #expect(run.stdout.isEmpty)
        // A repeatable option takes every value, in order; a flag may be said twice.
        let repeated = try CLI.run(["verify"] + CLI.sampleFlags + ["--mvpd", "A", "--mvpd", "B", "--reject-replays", "--reject-replays", Self.token])
        #expect(repeated.status != 64, "\(repeated.stderr)")
        #expect(repeated.stdout.contains("17 tokens:"), "\(repeated.stdout)")
    }

    @Test func aDashedValueNeedsEqualsUnlessTheOptionIsNumeric() throws {
        let missing = try CLI.run(["mint", "--key", "Samples/keys/test-p256.pem", "--requestor", "-TNT", "--resource", "TNT"])
        #expect(missing.status == 64)
        #expect(missing.stderr.contains("Missing value for '--requestor <ID>'"), "\(missing.stderr)")
        let equals = try CLI.run(["mint", "--key", "Samples/keys/test-p256.pem", "--requestor=-TNT", "--resource=TNT", "--ttl=1h"])
        #expect(equals.status == 0, "\(equals.stderr)")
        let decoded = try CLI.run(["inspect", "--format", "jsonl", "-"], stdin: equals.stdout)
        #expect(decoded.stdout.contains("\"requestorID\":\"-TNT\""), "\(decoded.stdout)")
    }

    @Test func doubleDashEndsTheOptions() throws {
        // After `--`, a word that looks like an option is an INPUT: here a token that does not decode.
        let run = try CLI.run(["inspect", "--", "--format"])
        #expect(run.status == 1, "\(run.stderr)")
        #expect(run.stdout.contains("INVALID_TOKEN_FORMAT"))
    }

    @Test func valuesAreCheckedAsTheyAreRead() throws {
        let choice = try CLI.run(["verify", "--format", "xml", Self.token])
        #expect(choice.status == 64)
        #expect(choice.stderr.contains("Please provide one of 'text', 'json' or 'jsonl'."), "\(choice.stderr)")
        let number = try CLI.run(["mint", "cdn", "--profile", "p", "--resource", "r", "--lifetime", "4h"])
        #expect(number.status == 64)
        #expect(number.stderr.contains("The value '4h' is invalid for '--lifetime <SECONDS>'"), "\(number.stderr)")
        let flag = try CLI.run(["mint", "--pretty=yes"])
        #expect(flag.status == 64)
        #expect(flag.stderr.contains("'--pretty' does not take any value"), "\(flag.stderr)")
        let extra = try CLI.run(["metadata", "a", "b"])
        #expect(extra.status == 64)
        #expect(extra.stderr.contains("Unexpected argument 'b'"))
    }

    @Test func helpAndVersionWinAndHelpNamesItsCommand() throws {
        #expect(try CLI.run(["verify", "--kye", "x", "--help"]).stdout.hasPrefix("OVERVIEW: Give every token a verdict"))
        #expect(try CLI.run(["help", "mint", "cdn"]).stdout == (try CLI.run(["mint", "cdn", "-h"]).stdout))
        let bare = try CLI.run([])
        #expect(bare.status == 0)
        #expect(bare.stdout.contains("SUBCOMMANDS:"))
        let unknown = try CLI.run(["help", "frob"])
        #expect(unknown.status == 64)
        #expect(unknown.stderr.contains("Unknown subcommand 'frob'"))
        let version = try CLI.run(["mint", "--version"])
        #expect(version.status == 0)
        #expect(version.stdout.split(separator: ".").count == 3, "\(version.stdout)")
    }

    @Test func theWordsAnErrorQuotesAreEscaped() throws {
        let run = try CLI.run(["verify", "--\u{1B}[2J", Self.token])
        #expect(run.status == 64)
        #expect(!run.stderr.contains("\u{1B}"), "\(run.stderr)")
        #expect(run.stderr.contains("Unknown option '--\\x1b[2J'"), "\(run.stderr)")
        let value = try CLI.run(["verify", "--format", "\u{202E}txt", Self.token])
        #expect(!value.stderr.contains("\u{202E}"))
    }

    @Test func helpIsWrappedToTheTerminalsWidth() throws {
        let help = try CLI.run(["verify", "--help"], environment: ["COLUMNS": "60"]).stdout
        let lines = help.split(separator: "\n")
        #expect(lines.count > 60)
        for line in lines where !line.hasPrefix("USAGE:") {
            // A line is longer only when it is one word that cannot be broken.
            #expect(line.count <= 60 || !line.trimmingCharacters(in: .whitespaces).contains(" "), "\(line)")
        }
        #expect(help.contains("  --format <format>       Output: text for people, json\n                          (one array)"), "\(help)")
    }
}
