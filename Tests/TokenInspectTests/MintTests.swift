import Foundation
import Testing

/// `mint` issues tokens the verifier accepts, in every kind, form and encoding.
@Suite struct MintTests {
    static let verifyFlags = ["--key", "Samples/keys/trusted", "--now", "2026-01-15T12:03:00Z", "--format", "jsonl"]

    @Test(arguments: ["media", "authentication", "authorization"], ["raw", "base64", "base64url"])
    func mintedTokensVerify(kind: String, encoding: String) throws {
        for closed in [false, true] {
            var arguments = [
                "mint", "--key", "Samples/keys/test-rsa2048.pem", "--kind", kind, "--requestor", "TNT",
                "--resource", "TNT", "--mvpd", "Comcast_SSO", "--issue-time", "2026-01-15T12:00:00Z",
                "--device-id", "box-1", "--encoding", encoding, "--field", "extra/note=minted & kept",
            ]
            if closed { arguments.append("--closed-signature") }
            let minted = try CLI.run(arguments)
            #expect(minted.status == 0, "\(minted.stderr)")
            let token = minted.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(!token.contains("\n"))
            if encoding == "raw" {
                #expect(token.hasPrefix("<signatureInfo>"))
                #expect(token.contains(closed ? "</signatureInfo>" : "<signatureInfo><"))
            }
            let verified = try CLI.run(["verify"] + Self.verifyFlags + ["--requestor", "TNT", "--resource", "TNT", "--device-id", "box-1", token])
            let object = try #require(try CLI.jsonLines(verified.stdout).first)
            #expect(object["status"] as? String == "VALID_TOKEN", "\(object["reason"] ?? "")")
            #expect(object["kind"] as? String == kind)
            #expect(object["transport"] as? String == encoding)
            #expect((object["fields"] as? [String: Any])?["extra/note"] as? String == "minted & kept")
            let signature = try #require(object["signature"] as? [String: Any])
            #expect(signature["form"] as? String == (closed ? "closed" : "legacy"))
        }
    }

    @Test(arguments: [
        ("420000", "2026-01-15T12:07:00Z"), ("90s", "2026-01-15T12:01:30Z"), ("7min", "2026-01-15T12:07:00Z"),
        ("2h", "2026-01-15T14:00:00Z"), ("1500ms", "2026-01-15T12:00:01.500Z"),
    ])
    func ttlUnits(ttl: String, expires: String) throws {
        let minted = try CLI.run([
            "mint", "--key", "Samples/keys/test-p256.pem", "--requestor", "TNT", "--resource", "TNT",
            "--issue-time", "2026-01-15T12:00:00Z", "--ttl", ttl,
        ])
        let inspected = try CLI.run(["inspect", "--format", "jsonl", minted.stdout.trimmingCharacters(in: .whitespacesAndNewlines)])
        #expect(try CLI.jsonLines(inspected.stdout).first?["expiresAt"] as? String == expires)
    }

    @Test func prettyAndShortAuthorizationTokenRoot() throws {
        let minted = try CLI.run([
            "mint", "--key", "Samples/keys/test-ed25519.pem", "--requestor", "TNT", "--resource", "TNT",
            "--issue-time", "2026-01-15T12:00:00Z", "--root", "shortAuthorizationToken", "--pretty",
        ])
        #expect(minted.stdout.split(separator: "\n").count > 4)
        // Through stdin, as a multi-line raw record.
        let verified = try CLI.run(["verify"] + Self.verifyFlags + ["-"], stdin: minted.stdout)
        let object = try #require(try CLI.jsonLines(verified.stdout).first)
        #expect(object["status"] as? String == "VALID_TOKEN")
        #expect(object["root"] as? String == "shortAuthorizationToken")
    }

    /// `--issue-time` takes what its help says: a token date shape, ISO 8601 or epoch milliseconds (and
    /// epoch seconds, read by magnitude as `--now` is); each gives the same token date.
    @Test func issueTimeTakesEpochMillisecondsAsItsHelpSays() throws {
        let help = try CLI.run(["mint", "token", "--help"]).stdout
        #expect(help.contains("epoch\n") || help.contains("epoch milliseconds"), "\(help)")
        var issued: [String] = []
        for time in ["2026-01-15T12:00:00Z", "1768478400000", "1768478400"] {
            let minted = try CLI.run([
                "mint", "--key", "Samples/keys/test-rsa2048.pem", "--requestor", "TNT", "--resource", "TNT",
                "--issue-time", time, "--ttl", "600",
            ])
            #expect(minted.status == 0, "\(time): \(minted.stderr)")
            let inspected = try CLI.run(["inspect", "--format", "jsonl", minted.stdout.trimmingCharacters(in: .whitespacesAndNewlines)])
            let object = try #require(try CLI.jsonLines(inspected.stdout).first)
            issued.append(object["issuedAt"] as? String ?? "\(object)")
        }
        #expect(Set(issued).count == 1, "\(issued)")
    }

    @Test func mintRefusesWhatItCannotIssue() throws {
        let base = ["mint", "--key", "Samples/keys/test-rsa2048.pem", "--requestor", "TNT"]
        #expect(try CLI.run(base).status == 64)  // media needs --resource
        #expect(try CLI.run(base + ["--resource", "T", "--ttl", "soon"]).status == 64)
        #expect(try CLI.run(base + ["--resource", "T", "--root", "nope"]).status == 64)
        #expect(try CLI.run(base + ["--resource", "T", "--issue-time", "tomorrow"]).status == 64)
        #expect(try CLI.run(base + ["--resource", "T", "--field", "bad path=x"]).status == 64)
        let publicKey = try CLI.run(["mint", "--key", "Samples/keys/trusted/test-rsa2048.pub.pem", "--requestor", "T", "--resource", "T"])
        #expect(publicKey.status == 2)
        #expect(publicKey.stderr.contains("test-rsa2048.pub.pem"))
        let weak = try CLI.run(["mint", "--key", "Samples/keys/test-rsa1024.pem", "--requestor", "T", "--resource", "T"])
        #expect(weak.status == 2)
        #expect(
            try CLI.run(["mint", "--key", "Samples/keys/test-rsa1024.pem", "--allow-insecure-keys", "--requestor", "T", "--resource", "T"]).status
                == 0
        )
    }
}

/// Issue 20 item 9: `mint` issues what issuers issue — a fresh random GUID per
/// token, so two mints with the same inputs and clock are two tokens (a replay
/// check would refuse the second copy of one).
@Suite struct MintGUIDTests {
    static func mint(_ kind: String, _ extra: [String] = []) throws -> String {
        let minted = try CLI.run(
            [
                "mint", "--key", "Samples/keys/test-rsa2048.pem", "--kind", kind, "--requestor", "TNT",
                "--resource", "TNT", "--issue-time", "2026-01-15T12:00:00Z",
            ] + extra
        )
        #expect(minted.status == 0, "\(minted.stderr)")
        return minted.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func guid(_ token: String, field: String) throws -> String? {
        let inspected = try CLI.run(["inspect", "--format", "jsonl", token])
        let object = try #require(try CLI.jsonLines(inspected.stdout).first)
        return (object["fields"] as? [String: Any])?[field] as? String
    }

    static func isUUIDv4(_ text: String) -> Bool {
        let groups = text.split(separator: "-", omittingEmptySubsequences: false).map(\.count)
        let hex = text.utf8.allSatisfy {
            ("0"..."9").contains(Character(UnicodeScalar($0))) || ("a"..."f").contains(Character(UnicodeScalar($0))) || $0 == UInt8(ascii: "-")
        }
        return groups == [8, 4, 4, 4, 12] && hex && Array(text)[14] == "4" && "89ab".contains(Array(text)[19])
    }

    @Test(arguments: [("media", "sessionGUID"), ("authentication", "simpleTokenAuthenticationGuid")])
    func twoMintsOfTheSameInputsDiffer(kind: String, field: String) throws {
        let first = try Self.mint(kind)
        let second = try Self.mint(kind)
        #expect(first != second)
        let guids = try [Self.guid(first, field: field), Self.guid(second, field: field)]
        let (a, b) = (try #require(guids[0]), try #require(guids[1]))
        #expect(a != b)
        #expect(Self.isUUIDv4(a), "\(a)")
        #expect(Self.isUUIDv4(b), "\(b)")
    }

    @Test(arguments: [("media", "sessionGUID"), ("authentication", "simpleTokenAuthenticationGuid")])
    func sessionGuidSetsIt(kind: String, field: String) throws {
        let token = try Self.mint(kind, ["--session-guid", "chosen-guid-1"])
        #expect(try Self.guid(token, field: field) == "chosen-guid-1")
        // Chosen, the token is reproducible again (RSA PKCS #1 v1.5 signatures are deterministic).
        #expect(try Self.mint(kind, ["--session-guid", "chosen-guid-1"]) == token)
    }
}

/// Issue 10 class 11 and issue 15 item 4: `mint` never issues a token its own
/// `verify` would call malformed; such requests are usage errors naming the part.
@Suite struct MintRefusalTests {
    static let base = ["mint", "--key", "Samples/keys/test-rsa2048.pem", "--requestor", "TNT", "--resource", "TNT"]

    @Test(arguments: [
        (["--field", "requestorID=CNN"], "known field"),
        (["--field", "ttl=5"], "known field"),
        (["--field", "@attr=1"], "attribute"),
        (["--field", "=5"], "empty"),
        (["--field", "novalue"], "no '='"),
        (["--mvpd", "Comcast\u{1B}[2K"], "control character"),
        (["--field", "note=a\u{7}b"], "control character"),
        (["--kind", "authorization", "--fingerprint", "ABCDEF0123456789ABCDEF0123456789"], "lowercase hex"),
        (["--kind", "authorization", "--fingerprint", "abc"], "lowercase hex"),
        (["--ttl", "9223372036854775807"], "ttl"),
        (["--ttl", "99999999999999h"], "--ttl"),
    ])
    func refusedAsUsageErrors(arguments: [String], mentions: String) throws {
        let result = try CLI.run(Self.base + arguments)
        #expect(result.status == 64, "\(arguments): \(result.stderr)")
        #expect(result.stderr.contains(mentions), "\(arguments): \(result.stderr)")
        #expect(result.stdout.isEmpty)
        #expect(HostileOutputTests.isTerminalSafe(result.stderr))
    }

    @Test func anUnknownFieldStillMints() throws {
        let minted = try CLI.run(Self.base + ["--field", "channelName=Turner", "--field", "extra/inner=1"])
        #expect(minted.status == 0)
        let verified = try CLI.run(["verify", "--key", "Samples/keys/trusted", minted.stdout.trimmingCharacters(in: .whitespacesAndNewlines)])
        #expect(verified.status == 0, "\(verified.stdout)")
    }

    @Test func verifyTakesASCIIHexFingerprintsOnly() throws {
        let fullWidth = String(repeating: "\u{FF11}", count: 64)  // full-width '1'
        let result = try CLI.run(["verify", "--key", "Samples/keys/trusted", "--fingerprint", fullWidth, "x"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("--fingerprint"))
    }
}
