import EntitlementTokens
import Foundation
import Testing

/// docs/DESIGN.md#operators, the CLI's side: `--version` says the release of the
/// source (`ProductVersion`), and verifying with a key of the repository's
/// sample set found outside `Samples/keys` warns on stderr.
@Suite struct OperatorWarningTests {
    static let token = "@Samples/tokens/valid.txt"

    @Test func versionIsTheOneOfTheSource() throws {
        let result = try CLI.run(["--version"])
        #expect(result.status == 0)
        #expect(result.stdout == ProductVersion.version + "\n")
    }

    @Test func aSampleKeyCopiedOutOfTheSamplesWarns() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tokeninspect-keys-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let copy = directory.appendingPathComponent("issuer.pem")
        try FileManager.default.copyItem(at: CLI.packageRoot.appendingPathComponent("Samples/keys/trusted/test-rsa2048.pub.pem"), to: copy)
        let result = try CLI.run(["verify", "--key", copy.path, "--now", "2026-01-15T12:03:00Z", "--resource", "TNT",
                                  "\(Self.token)"])
        #expect(result.stderr.contains("tokeninspect: warning: \(copy.path) is the repository's sample key test-rsa2048: its private key is published"),
                "\(result.stderr)")
    }

    @Test func theSamplesWhereTheyShipStayQuiet() throws {
        let result = try CLI.run(["verify", "--key", "Samples/keys/trusted", "--now", "2026-01-15T12:03:00Z", Self.token])
        #expect(!result.stderr.contains("sample key"), "\(result.stderr)")
    }
}
