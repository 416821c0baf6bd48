import EntitlementTokens
import Foundation
import Testing

/// docs/DESIGN.md#operators, the CLI's side: `--version` says the release of the
/// source (`ProductVersion`), and checking anything with a key of the
/// repository's sample set found outside `Samples` warns on stderr, in one
/// wording for every kind (docs/DESIGN.md#sample-keys).
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
        let result = try CLI.run([
            "verify", "--key", copy.path, "--now", "2026-01-15T12:03:00Z", "--resource", "TNT",
            "\(Self.token)",
        ])
        #expect(
            result.stderr.contains("tokeninspect: warning: \(copy.path) is the repository's sample key test-rsa2048: its private key is published"),
            "\(result.stderr)"
        )
    }

    @Test func theSamplesWhereTheyShipStayQuiet() throws {
        let result = try CLI.run(["verify", "--key", "Samples/keys/trusted", "--now", "2026-01-15T12:03:00Z", Self.token])
        #expect(!result.stderr.contains("sample key"), "\(result.stderr)")
    }

    /// Each kind the CLI checks with a key, the sample key it is checked with, and the run.
    struct Checked: CustomStringConvertible, Sendable {
        var description: String
        /// The sample file copied out of `Samples`, and the name the warning gives it.
        var sample: String
        var keyName: String
        /// The arguments, given the copy's path (the sample in place: `sample`).
        var arguments: @Sendable (String) -> [String]
        var consequence = "so anyone can mint tokens it verifies"
    }

    static let now = ["--now", "2026-01-15T12:03:00Z"]
    static let checked: [Checked] = [
        Checked(
            description: "software statement, PEM key",
            sample: "Samples/keys/trusted/test-rsa2048.pub.pem",
            keyName: "test-rsa2048",
            arguments: { ["verify", "--key", $0] + now + ["@Samples/credentials/software-statement.jwt"] }
        ),
        Checked(
            description: "software statement, JWKS",
            sample: "Samples/credentials/sample-1.jwks",
            keyName: "test-rsa2048",
            arguments: { ["verify", "--key", $0] + now + ["@Samples/credentials/software-statement.jwt"] }
        ),
        Checked(
            description: "signed requestor ID",
            sample: "Samples/keys/trusted/test-rsa2048.pub.pem",
            keyName: "test-rsa2048",
            arguments: {
                [
                    "verify", "--kind", "signed-requestor-id", "--requestor", "TNT", "--key", $0,
                    "@Samples/credentials/signed-requestor-id.txt",
                ]
            }
        ),
        Checked(
            description: "user metadata's decryption key",
            sample: "Samples/keys/test-rsa2048.pem",
            keyName: "test-rsa2048",
            arguments: { ["metadata", "--decrypt-key", $0, "@Samples/credentials/user-metadata.json"] },
            consequence: "so anyone can read what is encrypted to it"
        ),
        Checked(
            description: "CDN token, --key",
            sample: "Samples/cdn/test-only-akamai.hex",
            keyName: "test-only-akamai",
            arguments: { ["verify", "--key", $0] + now + ["@Samples/cdn/akamai-url.txt"] }
        ),
        Checked(
            description: "CDN token, a PEM --key",
            sample: "Samples/cdn/test-only-cloudfront-rsa2048.pem",
            keyName: "test-only-cloudfront-rsa2048",
            arguments: {
                ["verify", "--key", $0, "--url", "https://d111111abcdef8.cloudfront.net/hls/tnt/seg-1.ts"] + now
                    + ["@Samples/cdn/cloudfront-cookie.txt"]
            }
        ),
        Checked(
            description: "CDN token, --profile",
            sample: "Samples/cdn/test-only-secure-link.secret",
            keyName: "test-only-secure-link",
            arguments: { key in
                // The sample profile with its key at `key` (in place: the shipped profile itself).
                guard key.hasPrefix("/") else {
                    return ["verify", "--profile", "Samples/cdn/nginx-secure-link.profile"] + now
                        + ["@Samples/cdn/nginx-secure-link-set-cookie.txt"]
                }
                let profile = key + ".profile"
                let text =
                    (try? String(contentsOf: CLI.packageRoot.appendingPathComponent("Samples/cdn/nginx-secure-link.profile"), encoding: .utf8)) ?? ""
                try? text.replacingOccurrences(of: "Samples/cdn/test-only-secure-link.secret", with: key)
                    .write(toFile: profile, atomically: true, encoding: .utf8)
                return ["verify", "--profile", profile] + now + ["@Samples/cdn/nginx-secure-link-set-cookie.txt"]
            }
        ),
    ]

    /// The same key outside `Samples` warns, naming the file and the sample; in place it is quiet.
    @Test(arguments: checked)
    func everyKindOfCheckWarnsOfASampleKey(kind: Checked) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tokeninspect-keys-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let copy = directory.appendingPathComponent("issuer-" + (kind.sample.split(separator: "/").last.map(String.init) ?? "key"))
        try FileManager.default.copyItem(at: CLI.packageRoot.appendingPathComponent(kind.sample), to: copy)
        let copied = try CLI.run(kind.arguments(copy.path))
        let warning =
            "tokeninspect: warning: \(copy.path) is the repository's sample key \(kind.keyName): its private key is published, \(kind.consequence)\n"
        #expect(copied.stderr.components(separatedBy: warning).count == 2, "once: \(copied.stderr)")
        #expect(copied.status == 0, "\(copied.stdout)\(copied.stderr)")
        let inPlace = try CLI.run(kind.arguments(kind.sample))
        #expect(inPlace.status == 0, "\(inPlace.stdout)\(inPlace.stderr)")
        #expect(!inPlace.stderr.contains("sample key"), "\(inPlace.stderr)")
    }

    /// `SampleKeys.cdnFingerprints` names every key of `Samples/cdn`, each read as a key file is.
    @Test func cdnSampleKeyFingerprintsMatchTheSampleFiles() throws {
        let directory = CLI.packageRoot.appendingPathComponent("Samples/cdn")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix("test-only-") }
        #expect(files.count == SampleKeys.cdnFingerprints.count, "\(files)")
        for file in files {
            let bytes = try [UInt8](Data(contentsOf: directory.appendingPathComponent(file)))
            #expect(SampleKeys.name(ofKeyFile: bytes) == String(file.prefix { $0 != "." }), "\(file)")
        }
        #expect(SampleKeys.name(ofKeyFile: Array("not a sample\n".utf8)) == nil)
    }
}
