import Foundation

@testable import GateTestSupport

/// The table of hostile strings and their escapings (`Fixtures/hostile-strings.json`) that
/// the Swift rule (`TerminalText`), the debugger's script under node and the same script
/// in Chromium are each checked against: one table, so the rules cannot drift apart.
struct HostileStrings: Decodable {
    struct Case: Decodable, Sendable {
        let name: String
        let input: String
        let escaped: String
    }

    let cases: [Case]

    static let file = GateFixtures.repository.appendingPathComponent("Tests/TokenGateIntegrationTests/Fixtures/hostile-strings.json")

    static func load() throws -> [Case] {
        try JSONDecoder().decode(HostileStrings.self, from: Data(contentsOf: file)).cases
    }
}
