import CDNTokens
import EntitlementTokens
import Foundation
import Testing

/// `tokeninspect har --cat-key` and `--session-secret` through the real
/// binary: the keys read as `tokengate serve` reads them, the verdicts in the
/// JSON, and a value that cannot be used refused before anything is read.
@Suite struct HARKeysCLITests {
    static let catKeyFile = "Samples/cdn/test-only-cat-hmac.hex"
    static let secret = Array("a-session-secret-of-at-least-32-bytes".utf8)

    /// A scratch directory holding `files`, removed by the caller.
    static func scratch(_ files: [String: [UInt8]]) throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("har-keys-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for (name, bytes) in files { try Data(bytes).write(to: directory.appendingPathComponent(name)) }
        return directory
    }

    /// A capture: a segment on a CAT, one on a valid session, one refused on an expired session.
    static func capture() throws -> [UInt8] {
        let now: Int64 = 1_768_478_460  // 2026-01-15T12:01:00Z
        let key = try CATKey(keyFile: Array(try Data(contentsOf: CLI.packageRoot.appendingPathComponent(catKeyFile))), id: nil, source: catKeyFile)
        let cat = try CommonAccessTokenIssuer.issue(
            CDNIssueParameters(url: try CDNURL(parsing: "https://edge.test/hls/tnt/master.m3u8"), scope: .folder, now: now - 10, lifetime: 600),
            issuer: "tests",
            key: key
        )
        let secrets = try PlaybackSessionSecrets(secrets: [secret])
        func session(expires: Int64) -> String {
            secrets.issue(resource: "TNT", deviceID: nil, requestor: "TNT", keyID: 7, expires: TokenTimestamp(millisecondsSince1970: expires * 1000)!)
        }
        func entry(_ time: String, _ url: String, _ status: Int, cookie: String? = nil) -> String {
            let headers = cookie.map { #"[{"name":"Cookie","value":"\#($0)"}]"# } ?? "[]"
            return
                #"{"startedDateTime":"2026-01-15T12:01:\#(time)Z","request":{"method":"GET","url":"\#(url)","headers":\#(headers)},"response":{"status":\#(status),"headers":[]}}"#
        }
        let entries = [
            entry("00", "https://edge.test/hls/tnt/seg1.ts?cat=\(cat)", 200),
            entry("01", "https://site.test/hls/tnt/seg2.ts", 200, cookie: "tokengate_session=\(session(expires: now + 3600))"),
            entry("02", "https://site.test/hls/tnt/seg3.ts", 401, cookie: "tokengate_session=\(session(expires: now - 60))"),
        ]
        return Array(#"{"log":{"version":"1.2","entries":[\#(entries.joined(separator: ","))]}}"#.utf8)
    }

    static func verdicts(_ stdout: String) throws -> [String] {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(stdout.utf8)) as? [String: Any])
        return (object["credentials"] as? [[String: Any]] ?? []).map { "\($0["kind"] ?? "") \($0["verdict"] ?? "")" }
    }

    @Test func withTheKeyAndTheSecretTheCATAndTheSessionsAreJudged() throws {
        let directory = try Self.scratch(["secret": Self.secret, "capture.har": try Self.capture()])
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try CLI.run([
            "har", "--format", "json", "--cat-key", Self.catKeyFile, "--session-secret", directory.appendingPathComponent("secret").path,
            directory.appendingPathComponent("capture.har").path,
        ])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(try Self.verdicts(result.stdout) == ["cat VALID_TOKEN", "tokengate-session VALID_SESSION", "tokengate-session SESSION_EXPIRED"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let findings = try #require(object["findings"] as? [[String: Any]])
        #expect(findings.first?["kind"] as? String == "SESSION_EXPIRED" && findings.first?["entries"] as? [Int] == [3])
        // The secret's text form (one trailing newline dropped) is the same secret.
        let text = try Self.scratch(["secret": Self.secret + [0x0A], "capture.har": try Self.capture()])
        defer { try? FileManager.default.removeItem(at: text) }
        let again = try CLI.run([
            "har", "--format", "json", "--session-secret", text.appendingPathComponent("secret").path,
            text.appendingPathComponent("capture.har").path,
        ])
        #expect(try Self.verdicts(again.stdout).contains("tokengate-session VALID_SESSION"))
        // The text report says it too.
        let plain = try CLI.run(["har", "--cat-key", Self.catKeyFile, directory.appendingPathComponent("capture.har").path])
        #expect(plain.stdout.contains("VALID_TOKEN"), "\(plain.stdout)")
    }

    @Test func withoutThemTheyAreNotChecked() throws {
        let directory = try Self.scratch(["capture.har": try Self.capture()])
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try CLI.run(["har", "--format", "json", directory.appendingPathComponent("capture.har").path])
        #expect(try Self.verdicts(result.stdout) == ["cat NOT_CHECKED", "tokengate-session NOT_CHECKED", "tokengate-session NOT_CHECKED"])
    }

    @Test func aValueThatCannotBeUsedIsRefusedNamingItsFile() throws {
        let directory = try Self.scratch(["short": Array("too short\n".utf8), "capture.har": try Self.capture()])
        defer { try? FileManager.default.removeItem(at: directory) }
        let har = directory.appendingPathComponent("capture.har").path
        let short = directory.appendingPathComponent("short").path
        // A usage error: more than FILE and ID.
        let words = try CLI.run(["har", "--cat-key", "a b c", har])
        #expect(words.status == 64, "\(words.stderr)")
        #expect(words.stderr.contains("--cat-key takes FILE or 'FILE ID'"))
        #expect(words.stdout.isEmpty)
        // Files that cannot be used: exit 2, as an unreadable --key.
        let missing = try CLI.run(["har", "--cat-key", directory.appendingPathComponent("absent.hex").path, har])
        #expect(missing.status == 2 && missing.stderr.contains("absent.hex: not a readable regular file"), "\(missing.stderr)")
        let notAKey = try CLI.run(["har", "--cat-key", short, har])
        #expect(notAKey.status == 2 && notAKey.stderr.contains("--cat-key \(short):"), "\(notAKey.stderr)")
        let tooShort = try CLI.run(["har", "--session-secret", short, har])
        #expect(tooShort.status == 2, "\(tooShort.stderr)")
        #expect(tooShort.stderr.contains("the file holds 10 bytes, of which 9 are used"), "\(tooShort.stderr)")
        let directoryGiven = try CLI.run(["har", "--session-secret", directory.path, har])
        #expect(
            directoryGiven.status == 2 && directoryGiven.stderr.contains("not a readable regular file of at most 4 KiB"),
            "\(directoryGiven.stderr)"
        )
        #expect(tooShort.stdout.isEmpty && directoryGiven.stdout.isEmpty)
    }

    @Test func theHelpAndTheCompletionsKnowTheOptions() throws {
        let help = try CLI.run(["har", "--help"])
        #expect(help.stdout.contains("--cat-key") && help.stdout.contains("--session-secret"))
        // The completion scripts ask the binary, which completes the options from the command spec, and files after them.
        let options = try CLI.run(["---complete", "2", "tokeninspect", "har", "--"])
        #expect(options.stdout.contains("--cat-key\n") && options.stdout.contains("--session-secret\n"), "\(options.stdout)")
        for option in ["--cat-key", "--session-secret"] {
            let value = try CLI.run(["---complete", "3", "tokeninspect", "har", option, "Sam"])
            #expect(value.stdout.hasPrefix(":files"), "\(option): \(value.stdout)")
        }
    }
}
