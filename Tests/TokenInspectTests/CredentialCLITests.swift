import Foundation
import Testing

/// `inspect` and `verify` over credentials (docs/DESIGN.md#telling-the-kinds-apart): detection per INPUT,
/// `--kind`, mixed runs, stdin, and hostile claim text.
@Suite struct CredentialCLITests {
    static let statement = "@Samples/credentials/software-statement.jwt"
    static let now = ["--now", "2026-01-15T12:03:00Z"]

    @Test func aStatementOnStdinIsDetected() throws {
        let text = try String(
            contentsOfFile: CLI.packageRoot.appendingPathComponent("Samples/credentials/software-statement.jwt").path,
            encoding: .utf8
        )
        let result = try CLI.run(
            ["verify", "--key", "Samples/keys/trusted", "--format", "jsonl"] + Self.now,
            stdin: "\u{FEFF}\"\(text.trimmingCharacters(in: .whitespacesAndNewlines))\"\n"
        )
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
        let result = try CLI.run(
            ["verify", "--key", "Samples/keys/trusted", "--kind", "user-metadata", "--format", "jsonl", Self.statement] + Self.now
        )
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
        let minted = try CLI.run([
            "mint", "software-statement", "--key", "Samples/keys/test-rsa2048.pem", "--software-id", "app\u{1B}[2J\u{202E}evil",
            "--claim", "note=line1\nFAKE VALID_TOKEN",
        ])
        try #require(minted.status == 0, "\(minted.stderr)")
        let shown = try CLI.run(["inspect", minted.stdout.trimmingCharacters(in: .whitespacesAndNewlines)])
        #expect(shown.status == 0)
        #expect(!shown.stdout.contains("\u{1B}[2J") && !shown.stdout.contains("\u{202E}"))
        #expect(shown.stdout.contains("\\x1b[2J") && shown.stdout.contains("\\u{202E}"))
        #expect(!shown.stdout.split(separator: "\n").contains { $0.hasPrefix("FAKE") })
    }

    /// A programmer's `.p12` named with `--key` (docs/DESIGN.md#key-passwords): its public half
    /// verifies signed requestor IDs and statements, the password by docs/DESIGN.md#key-passwords;
    /// for tokens it stays refused.
    @Test func aPKCS12KeyVerifiesSignedRequestorIDsWithItsPassword() throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("p12-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let keys = CLI.packageRoot.appendingPathComponent("Samples/keys")
        try #require(
            try DecodedOutputTests.openssl(
                [
                    "pkcs12", "-export", "-inkey", keys.appendingPathComponent("test-rsa2048.pem").path,
                    "-in", keys.appendingPathComponent("test-rsa2048-cert.pem").path,
                    "-passout", "pass:s3cret", "-out", "programmer.p12",
                ],
                in: scratch
            ) == 0
        )
        let p12 = scratch.appendingPathComponent("programmer.p12").path
        let minted = try CLI.run(["mint", "signed-requestor-id", "--key", "Samples/keys/test-rsa2048.pem", "--requestor", "TNT"])
        try #require(minted.status == 0, "\(minted.stderr)")
        let srid = minted.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let verify = ["verify", "--kind", "signed-requestor-id", "--requestor", "TNT", "--key", p12, "--format", "jsonl", srid]

        let fromEnvironment = try CLI.run(verify, environment: ["TOKENINSPECT_KEY_PASSWORD": "s3cret"])
        #expect(fromEnvironment.status == 0, "\(fromEnvironment.stdout)\(fromEnvironment.stderr)")
        let object = try #require(try CLI.jsonLines(fromEnvironment.stdout).first)
        #expect(object["status"] as? String == "VALID_TOKEN")
        #expect((object["verifiedBy"] as? String)?.contains("programmer.p12") == true)

        let passwordFile = scratch.appendingPathComponent("password").path
        try Data("s3cret\n".utf8).write(to: URL(fileURLWithPath: passwordFile))
        #expect(try CLI.run(verify + ["--key-password-file", passwordFile]).status == 0)

        // No password given: the empty one is tried, and the error says so.
        let wrong = try CLI.run(verify)
        #expect(wrong.status == 2)
        #expect(wrong.stderr.contains("password is wrong") && wrong.stderr.contains("the empty password"), "\(wrong.stderr)")

        // A statement signed by the same key verifies with the .p12 too.
        let statement = try CLI.run(["mint", "software-statement", "--key", "Samples/keys/test-rsa2048.pem", "--software-id", "app"])
        try #require(statement.status == 0, "\(statement.stderr)")
        let verified = try CLI.run(
            ["verify", "--key", p12, statement.stdout.trimmingCharacters(in: .whitespacesAndNewlines)],
            environment: ["TOKENINSPECT_KEY_PASSWORD": "s3cret"]
        )
        #expect(verified.status == 0, "\(verified.stdout)\(verified.stderr)")

        // Tokens never trust a programmer's key container.
        let token = try CLI.run(["verify", "--key", p12, "@Samples/tokens/valid.txt"], environment: ["TOKENINSPECT_KEY_PASSWORD": "s3cret"])
        #expect(token.status == 2)
        #expect(token.stderr.contains("never trusted for tokens"), "\(token.stderr)")
    }

    @Test func mintRefusesAClaimGivenTwice() throws {
        let result = try CLI.run(["mint", "software-statement", "--key", "Samples/keys/test-rsa2048.pem", "--iss", "a", "--claim", "iss=b"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("given twice"))
    }
}
