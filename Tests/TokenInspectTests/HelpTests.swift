import Foundation
import Testing

/// `--help` is part of the contract people read; a change to it must be deliberate.
/// To accept a new help text: `UPDATE_GOLDEN=1 swift test --filter HelpTests`.
@Suite struct HelpTests {
    @Test(arguments: ["", "inspect", "verify", "mint"])
    func helpMatchesItsGoldenText(subcommand: String) throws {
        let arguments = subcommand.isEmpty ? ["--help"] : [subcommand, "--help"]
        let result = try CLI.run(arguments)
        #expect(result.status == 0)
        let golden = CLI.packageRoot.appendingPathComponent("Tests/TokenInspectTests/Golden/help-\(subcommand.isEmpty ? "main" : subcommand).txt")
        if ProcessInfo.processInfo.environment["UPDATE_GOLDEN"] == "1" {
            try result.stdout.write(to: golden, atomically: true, encoding: .utf8)
        }
        let expected = try String(contentsOf: golden, encoding: .utf8)
        #expect(result.stdout == expected)
    }
}
