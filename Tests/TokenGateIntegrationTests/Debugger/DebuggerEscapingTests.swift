import EntitlementTokens
import Foundation
import Testing

@testable import GateTestSupport
@testable import TokenGate

/// The escaping rule the debugger's page shares with the CLI (docs/DESIGN.md#text-for-people,
/// docs/DESIGN.md#assets-are-files), checked on both sides against one table of hostile
/// strings (`Fixtures/hostile-strings.json`): the Swift rule here, the script's rule under
/// node by Tests/JavaScript/escaping.test.js, and in Chromium by `DebuggerBrowserTests`.
@Suite struct DebuggerEscapingTests {
    @Test func theSwiftRuleGivesEveryEscapingOfTheTable() throws {
        let cases = try HostileStrings.load()
        #expect(cases.count >= 10)
        for entry in cases {
            #expect(TerminalText.escaped(entry.input) == entry.escaped, "\(entry.name)")
        }
    }

    /// The node test, so `swift test` (the README's test command) covers it too.
    @Test(.enabled(if: NodeJS.available, "nodejs not installed (apt-get install nodejs)"))
    func theScriptsRuleGivesEveryEscapingOfTheTableUnderNode() throws {
        let (status, output) = try NodeJS.run(["Tests/JavaScript/escaping.test.js"])
        #expect(status == 0, "\(output)")
        // Every case of the table ran as a test of its own (and none was skipped).
        let cases = try HostileStrings.load()
        #expect(output.contains("# pass \(cases.count + 2)"), "\(output)")
        #expect(output.contains("# fail 0"), "\(output)")
    }

    /// The script the gate serves is the file the node test requires, and it parses.
    @Test(.enabled(if: NodeJS.available, "nodejs not installed (apt-get install nodejs)"))
    func theServedScriptIsTheFileAndParses() throws {
        let file = GateFixtures.repository.appendingPathComponent("Sources/TokenGate/Debugger/Assets/debugger.js")
        #expect(try Array(Data(contentsOf: file)) == DebuggerAssets.script)
        let (status, output) = try NodeJS.run(["--check", file.path])
        #expect(status == 0, "\(output)")
    }
}
