import Foundation
import Testing

/// `--help` is part of the contract people read; a change to it must be deliberate.
/// To accept a new help text: `UPDATE_GOLDEN=1 swift test --filter HelpTests`.
@Suite struct HelpTests {
    @Test(arguments: ["", "inspect", "verify", "mint", "mint token", "mint software-statement", "manifest", "har"])
    func helpMatchesItsGoldenText(subcommand: String) throws {
        let arguments = subcommand.isEmpty ? ["--help"] : subcommand.split(separator: " ").map(String.init) + ["--help"]
        let result = try CLI.run(arguments)
        #expect(result.status == 0)
        let name = subcommand.isEmpty ? "main" : subcommand.replacingOccurrences(of: " ", with: "-")
        let golden = CLI.packageRoot.appendingPathComponent("Tests/TokenInspectTests/Golden/help-\(name).txt")
        if ProcessInfo.processInfo.environment["UPDATE_GOLDEN"] == "1" {
            try result.stdout.write(to: golden, atomically: true, encoding: .utf8)
        }
        let expected = try String(contentsOf: golden, encoding: .utf8)
        #expect(result.stdout == expected)
    }
}

/// What the golden texts must say, whatever else changes in them (docs/DESIGN.md#the-cli-contract).
@Suite struct HelpContentTests {
    /// Each option's entry: its first line and the indented lines after it.
    static func entries(_ help: String) -> [String] {
        var entries: [String] = []
        for line in help.split(separator: "\n") {
            if line.hasPrefix("  -") {
                entries.append(String(line))
            } else if line.hasPrefix("      "), !entries.isEmpty {
                entries[entries.count - 1] += " " + line.trimmingCharacters(in: .whitespaces)
            }
        }
        return entries
    }

    @Test(arguments: ["inspect", "verify", "mint", "mint token", "mint software-statement"])
    func defaultsAreWrittenOnceInUnitsPeopleUse(subcommand: String) throws {
        let help = try CLI.run(subcommand.split(separator: " ").map(String.init) + ["--help"]).stdout
        for entry in Self.entries(help) {
            #expect(entry.components(separatedBy: "default").count <= 2, "default written twice: \(entry)")
            #expect(!entry.contains("default: 30.0") && !entry.contains("default: 420000"), "\(entry)")
        }
    }

    @Test func jobsNamesItsValueAndMintsUsageNamesEveryRequiredOption() throws {
        #expect(try CLI.run(["verify", "--help"]).stdout.contains("--jobs <N>"))
        let usage = try #require(try CLI.run(["mint", "--help"]).stdout.split(separator: "\n").first { $0.hasPrefix("USAGE:") })
        for option in ["--key <PRIVATE_PEM>", "--requestor <ID>", "--resource <ID>"] {
            #expect(usage.contains(option), "\(usage)")
        }
        // The usage printed with an error names them too.
        let missing = try CLI.run(["mint", "--key", "Samples/keys/test-p256.pem", "--requestor", "TNT"])
        #expect(missing.status == 64)
        #expect(missing.stderr.contains("--resource <ID>"))
    }
}
