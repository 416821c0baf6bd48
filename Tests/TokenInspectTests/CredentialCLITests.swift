import Foundation
import Testing

/// `inspect` and `verify` over credentials (SPEC §13): detection per INPUT,
/// `--kind`, mixed runs, stdin, and hostile claim text.
@Suite struct CredentialCLITests {
    static let statement = "@Samples/credentials/software-statement.jwt"
    static let now = ["--now", "2026-01-15T12:03:00Z"]

    @Test func aStatementOnStdinIsDetected() throws {
        let text = try String(contentsOfFile: CLI.packageRoot.appendingPathComponent("Samples/credentials/software-statement.jwt").path, encoding: .utf8)
        let result = try CLI.run(["verify", "--key", "Samples/keys/trusted", "--format", "jsonl"] + Self.now, stdin: "\u{FEFF}\"\(text.trimmingCharacters(in: .whitespacesAndNewlines))\"\n")
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let object = try #require(try CLI.jsonLines(result.stdout).first)
        #expect(object["kind"] as? String == "software-statement")
        #expect((object["warnings"] as? [String])?.isEmpty == false)
    }

    @Test func tokensAndCredentialsInOneRunAreAUsageError() throws {
        let result = try CLI.run(["verify", "--key", "Samples/keys/trusted", Self.statement, "@Samples/tokens/valid.txt"] + Self.now)
        #expect(result.status == 64)
        #expect(result.stderr.contains("mix tokens and credentials"))
    }

    @Test func kindRefusesWhatIsNotThatKind() throws {
        let result = try CLI.run(["verify", "--key", "Samples/keys/trusted", "--kind", "user-metadata", "--format", "jsonl", Self.statement] + Self.now)
        #expect(result.status == 1)
        let object = try #require(try CLI.jsonLines(result.stdout).first)
        #expect(object["status"] as? String == "INVALID_TOKEN_FORMAT")
        #expect((object["error"] as? [String: Any])?["code"] as? String == "unrecognizedCredential")
    }

    @Test func aDocumentOfTwoKindsIsInvalidTokenFormat() throws {
        let result = try CLI.run(["inspect", "--format", "jsonl", #"{"keys":[],"updated":1,"data":{}}"#])
        #expect(result.status == 1)
        let object = try #require(try CLI.jsonLines(result.stdout).first)
        #expect(object["status"] as? String == "INVALID_TOKEN_FORMAT")
        #expect((object["error"] as? [String: Any])?["code"] as? String == "ambiguousCredential")
    }

    @Test func hostileClaimTextIsEscapedInTextOutput() throws {
        let minted = try CLI.run(["mint", "software-statement", "--key", "Samples/keys/test-rsa2048.pem", "--software-id", "app\u{1B}[2J\u{202E}evil",
                                  "--claim", "note=line1\nFAKE VALID_TOKEN"])
        try #require(minted.status == 0, "\(minted.stderr)")
        let shown = try CLI.run(["inspect", minted.stdout.trimmingCharacters(in: .whitespacesAndNewlines)])
        #expect(shown.status == 0)
        #expect(!shown.stdout.contains("\u{1B}[2J") && !shown.stdout.contains("\u{202E}"))
        #expect(shown.stdout.contains("\\x1b[2J") && shown.stdout.contains("\\u{202E}"))
        #expect(!shown.stdout.split(separator: "\n").contains { $0.hasPrefix("FAKE") })
    }

    @Test func mintRefusesAClaimGivenTwice() throws {
        let result = try CLI.run(["mint", "software-statement", "--key", "Samples/keys/test-rsa2048.pem", "--iss", "a", "--claim", "iss=b"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("given twice"))
    }
}
