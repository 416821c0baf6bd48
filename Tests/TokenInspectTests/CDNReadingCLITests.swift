import Foundation
import Testing

/// `inspect` and `verify` over pasted CDN tokens (docs/DESIGN.md#reading-cdn-tokens-back):
/// tokens made by `mint cdn` with the TEST-ONLY profiles of Samples/cdn,
/// verified with a key and with a profile, refused with their status, and
/// hostile pastes escaped.
@Suite struct CDNReadingCLITests {
    static let issued = ["--now", "2026-01-15T12:00:00Z"]
    static let checked = ["--now", "2026-01-15T12:03:00Z"]

    struct Kind: CustomStringConvertible, Sendable {
        var name: String
        /// `--key` and what the kind needs beside it.
        var keyFlags: [String]
        var description: String { name }
        var profile: String { "Samples/cdn/\(name).profile" }
    }

    static let kinds = [
        Kind(name: "akamai", keyFlags: ["--key", "Samples/cdn/test-only-akamai.hex"]),
        Kind(name: "cloudfront", keyFlags: ["--key", "Samples/cdn/test-only-cloudfront-rsa2048.pem", "--key-id", "K2JCJMDEHXQW5F"]),
        Kind(name: "cat", keyFlags: ["--key", "Samples/cdn/test-only-cat-hmac.hex", "--key-id", "samples-edge-1"]),
        Kind(
            name: "nginx-secure-link",
            keyFlags: [
                "--key", "Samples/cdn/test-only-secure-link.secret",
                "--secure-link-md5", "$secure_link_expires$folder $secret",
            ]
        ),
    ]

    /// What `mint cdn` prints for the kind's sample profile: the URL, then its cookies or header.
    static func minted(_ kind: Kind) throws -> String {
        let result = try CLI.run(["mint", "cdn", "--profile", kind.profile, "--resource", "TNT"] + issued)
        try #require(result.status == 0, "\(result.stderr)")
        return result.stdout
    }

    static func object(_ result: CLI.Result) throws -> [String: Any] {
        let objects = try CLI.jsonLines(result.stdout)
        try #require(objects.count == 1, "\(result.stdout)\(result.stderr)")
        return objects[0]
    }

    @Test(arguments: kinds)
    func eachKindVerifiesWithAKeyAndWithItsProfile(kind: Kind) throws {
        let paste = try Self.minted(kind)
        for flags in [kind.keyFlags, ["--profile", kind.profile]] {
            let result = try CLI.run(["verify", "--format", "jsonl"] + flags + Self.checked, stdin: paste)
            #expect(result.status == 0, "\(flags): \(result.stdout)\(result.stderr)")
            let object = try Self.object(result)
            #expect(object["status"] as? String == "VALID_TOKEN", "\(object)")
            #expect(object["kind"] as? String == kind.name)
            #expect(object["url"] as? String == paste.split(separator: "\n").first.map(String.init), "the pasted URL is the request")
            #expect(((object["fields"] as? [String: Any]) ?? [:]).count >= 2, "\(object)")
            #expect(object["expiresAt"] as? String == "2026-01-15T16:00:00Z")
        }
        let text = try CLI.run(["verify", "--profile", kind.profile] + Self.checked, stdin: paste)
        #expect(text.status == 0)
        #expect(text.stdout.hasPrefix("#1 VALID_TOKEN  \(kind.name) in "), "\(text.stdout)")
        #expect(text.stdout.contains("1 CDN token: 1 VALID_TOKEN"))
    }

    /// `paste` with one character of the MAC, the signature or the MD5 changed.
    static func tampered(_ paste: String, _ kind: Kind) throws -> String {
        var characters = Array(paste)
        let text = paste as NSString
        let index: Int
        switch kind.name {
        case "akamai": index = text.range(of: "hmac=").upperBound + 3
        case "cloudfront": index = text.range(of: "CloudFront-Signature=").upperBound + 3
        case "cat": index = text.range(of: "\n", options: .backwards).location - 3
        default: index = text.range(of: "tg_md5=").upperBound + 3
        }
        try #require(index > 0 && index < characters.count && characters[index].isASCII)
        characters[index] = characters[index] == "a" ? "b" : "a"
        return String(characters)
    }

    @Test(arguments: kinds)
    func aTamperedTokenIsRefusedWithItsStatus(kind: Kind) throws {
        let paste = try Self.tampered(Self.minted(kind), kind)
        for flags in [kind.keyFlags, ["--profile", kind.profile]] {
            let result = try CLI.run(["verify", "--format", "jsonl"] + flags + Self.checked, stdin: paste)
            #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
            #expect(try Self.object(result)["status"] as? String == "INVALID_SIGNATURE", "\(result.stdout)")
        }
    }

    @Test(arguments: kinds)
    func aURLOutsideTheScopeIsNotCoveredNamingTheScopeAndTheURL(kind: Kind) throws {
        let paste = try Self.minted(kind)
        let host = try #require(URL(string: String(paste.split(separator: "\n")[0]))?.host)
        let elsewhere = "https://\(host)/hls/cnn/seg-1.ts"
        let result = try CLI.run(["verify", "--format", "jsonl", "--profile", kind.profile, "--url", elsewhere] + Self.checked, stdin: paste)
        #expect(result.status == 1)
        let object = try Self.object(result)
        let reason = object["reason"] as? String ?? ""
        // nginx's MD5 covers the folder, so another folder breaks the hash: the edge answers 403 the same way.
        let expected = kind.name == "nginx-secure-link" ? "INVALID_SIGNATURE" : "URL_NOT_COVERED"
        #expect(object["status"] as? String == expected, "\(reason)")
        if expected == "URL_NOT_COVERED" {
            #expect(reason.contains("/hls/tnt/") && reason.contains(elsewhere), "\(reason)")
        }
        #expect(object["url"] as? String == elsewhere)
    }

    /// A URL whose path leaves the token's folder by a dot segment (in any spelling) or an
    /// encoded `/` is `INVALID_URL`, as `--url` and as the pasted URL: never resolved, never matched.
    @Test(arguments: kinds)
    func aPathThatLeavesTheScopeIsInvalidURLNeverCovered(kind: Kind) throws {
        let paste = try Self.minted(kind)
        let first = String(paste.split(separator: "\n")[0])
        let host = try #require(URL(string: first)?.host)
        for path in [
            "/hls/tnt/../cnn/seg-1.ts", "/hls/tnt/%2e%2E/cnn/seg-1.ts", "/hls/tnt/.%2e/cnn/seg-1.ts", "/hls/tnt/..;/cnn/seg-1.ts",
            "/hls/tnt/..%2fcnn/seg-1.ts",
        ] {
            let given = try CLI.run(
                ["verify", "--format", "jsonl", "--profile", kind.profile, "--url", "https://\(host)\(path)"] + Self.checked,
                stdin: paste
            )
            #expect(given.status == 1, "\(path): \(given.stdout)\(given.stderr)")
            #expect(try Self.object(given)["status"] as? String == "INVALID_URL", "\(kind) \(path): \(given.stdout)")
            // The same token pasted on that URL (its own query kept).
            let query = first.split(separator: "?", maxSplits: 1).dropFirst().first.map { "?\($0)" } ?? ""
            let moved = ["https://\(host)\(path)\(query)"] + paste.split(separator: "\n").dropFirst().map(String.init)
            let pasted = try CLI.run(["verify", "--format", "jsonl", "--profile", kind.profile] + Self.checked, stdin: moved.joined(separator: "\n"))
            #expect(pasted.status == 1, "\(path)")
            #expect(try Self.object(pasted)["status"] as? String == "INVALID_URL", "\(kind) \(path): \(pasted.stdout)")
        }
    }

    /// An entitlement token's option on a run of CDN tokens would be ignored: a CAT whose iss is not the
    /// --requestor came back valid. Each is a usage error naming it, as the CDN options are on other INPUTs.
    @Test func entitlementTokenOptionsOnCDNTokensAreUsageErrors() throws {
        let paste = try Self.minted(Self.kinds[2])
        for option in [
            ["--requestor", "evil.example"], ["--resource", "CNN"], ["--mvpd", "X"], ["--device-id", "d"],
            ["--fingerprint", String(repeating: "a", count: 64)], ["--reject-replays"],
        ] {
            let result = try CLI.run(["verify", "--profile", Self.kinds[2].profile] + option + Self.checked, stdin: paste)
            #expect(result.status == 64, "\(option): \(result.stdout)")
            #expect(result.stderr.contains("\(option[0]) is for entitlement tokens"), "\(result.stderr)")
        }
        let repaired = try CLI.run(["inspect", "--repair-plus"], stdin: paste)
        #expect(repaired.status == 64 && repaired.stderr.contains("--repair-plus"), "\(repaired.stderr)")
    }

    /// AWS's own CloudFront signer tests (aws-sdk-rust, aws-sdk-cloudfront-url-signer's tests: its
    /// TEST_RSA_KEY, a 512-bit RSA key, copied to Tests/CDNTokensTests/Fixtures/CloudFront) sign with keys
    /// under 2048 bits. `--allow-insecure-keys` reaches CloudFront verification and reads them, with a warning;
    /// without it the refusal names the flag. The signature is made here by the openssl CLI, over the canned
    /// policy AWS's test signs (image.jpg, APKAEXAMPLE, 1767290400).
    @Test func allowInsecureKeysReachesCloudFrontVerification() throws {
        let key = "Tests/CDNTokensTests/Fixtures/CloudFront/aws-sdk-rust-test-rsa512.pem"
        let resource = "https://d111111abcdef8.cloudfront.net/image.jpg"
        let policy = #"{"Statement":[{"Resource":"\#(resource)","Condition":{"DateLessThan":{"AWS:EpochTime":1767290400}}}]}"#
        let signed = try CLI.run([], shell: ["/bin/sh", "-c", "printf '%s' '\(policy)' | openssl dgst -sha1 -sign \(key) | base64 -w0"])
        #expect(signed.status == 0, "\(signed.stderr)")
        let signature = signed.stdout.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "=", with: "_")
            .replacingOccurrences(of: "/", with: "~")
        let url = "\(resource)?Expires=1767290400&Signature=\(signature)&Key-Pair-Id=APKAEXAMPLE"
        let now = ["--now", "2026-01-01T00:00:00Z", "--format", "jsonl"]
        let allowed = try CLI.run(["verify", "--key", key, "--allow-insecure-keys"] + now, stdin: url)
        #expect(allowed.status == 0, "\(allowed.stdout)\(allowed.stderr)")
        #expect(try Self.object(allowed)["status"] as? String == "VALID_TOKEN", "\(allowed.stdout)")
        #expect(allowed.stderr.contains("is RSA-512, under 2048 bits, read because of --allow-insecure-keys"), "\(allowed.stderr)")
        let expired = try CLI.run(
            ["verify", "--key", key, "--allow-insecure-keys", "--now", "2026-01-02T00:00:00Z", "--format", "jsonl"],
            stdin: url
        )
        #expect(try Self.object(expired)["status"] as? String == "TOKEN_EXPIRED")
        let refused = try CLI.run(["verify", "--key", key] + now, stdin: url)
        #expect(refused.status == 2, "\(refused.stdout)")
        #expect(refused.stderr.contains("--allow-insecure-keys"), "\(refused.stderr)")
    }

    /// RFC 8392's signed example (A.3) carries aud: `--cat-audience` names the audience this edge answers as,
    /// and the example verifies; without it the aud is refused by name, as RFC 8392 §3.1.3 asks.
    @Test func catAudienceLetsRFC8392sExampleVerify() throws {
        let hex =
            "d28443a10126a104524173796d6d657472696345434453413235365850a70175636f61703a2f2f61732e6578616d706c652e636f6d"
            + "02656572696b77037818636f61703a2f2f6c696768742e6578616d706c652e636f6d041a5612aeb0051a5610d9f0061a5610d9f007420b71"
            + "58405427c1ff28d23fbad1f29c4c7c6a555e601d6fa29f9179bc3d7438bacaca5acd08c8d4d4f96131680c429a01f85951ecee743a52b9b6"
            + "3632c57209120e1c9e30"
        let key = [
            "--kind", "cat", "--key", "Tests/CDNTokensTests/Fixtures/CAT/rfc8392-a2-3-p256-public.pem", "--key-id", "AsymmetricECDSA256",
            "--now", "2015-10-04T08:00:00Z", "--format", "jsonl",
        ]
        let named = try CLI.run(["verify", "--cat-audience", "coap://light.example.com"] + key + [hex])
        #expect(named.status == 0, "\(named.stdout)\(named.stderr)")
        #expect(try Self.object(named)["status"] as? String == "VALID_TOKEN")
        let unnamed = try CLI.run(["verify"] + key + [hex])
        #expect(unnamed.status == 1)
        #expect(try Self.object(unnamed)["status"] as? String == "UNSUPPORTED_CLAIM")
        let withProfile = try CLI.run(
            ["verify", "--profile", Self.kinds[2].profile, "--cat-audience", "x"] + Self.checked,
            stdin: try Self.minted(Self.kinds[2])
        )
        #expect(withProfile.status == 64)
    }

    @Test func expiredNotYetValidAndIPMismatch() throws {
        let akamai = try Self.minted(Self.kinds[0])
        let expired = try CLI.run(
            ["verify", "--format", "jsonl", "--profile", Self.kinds[0].profile, "--now", "2026-01-15T17:00:00Z"],
            stdin: akamai
        )
        #expect(expired.status == 1)
        #expect(try Self.object(expired)["status"] as? String == "TOKEN_EXPIRED")
        let early = try CLI.run(["verify", "--format", "jsonl", "--profile", Self.kinds[0].profile, "--now", "2026-01-15T11:00:00Z"], stdin: akamai)
        #expect(try Self.object(early)["status"] as? String == "TOKEN_NOT_YET_VALID")
        // An inspect without keys decodes: exit 0, no status.
        let inspected = try CLI.run(["inspect", "--format", "jsonl"] + Self.checked, stdin: akamai)
        #expect(inspected.status == 0)
        #expect(try Self.object(inspected)["status"] is NSNull)
    }

    @Test func inspectShowsACATInDiagnosticNotationWithClaimNames() throws {
        let paste = try Self.minted(Self.kinds[2])
        let header = try #require(paste.split(separator: "\n").first { $0.hasPrefix("CTA-Common-Access-Token: ") })
        let result = try CLI.run(["inspect", String(header)] + Self.checked)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("#1 DECODED (not verified)  cat in a header line (CTA-Common-Access-Token)"), "\(result.stdout)")
        #expect(result.stdout.contains("17([<<{1 /alg/: 5}>>, {4 /kid/: h'"), "\(result.stdout)")
        #expect(result.stdout.contains("1 /iss/: \"TNT\"") && result.stdout.contains("312 /catu/: {3 /path/: {1 /prefix/: \"/hls/tnt/\"}}"))
        #expect(result.stdout.contains("url      none given: the scope is not checked"), "\(result.stdout)")
    }

    /// docs/CDN.md#renewal-catr: a profile's renewal writes catr; `inspect` shows it by
    /// name and field, and where `--now` stands against `exp − deadline ≤ now < exp`.
    @Test func inspectShowsCatrAndWhetherNowIsInItsRenewalWindow() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("catr-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let profile = directory.appendingPathComponent("cat.profile").path
        let sample = try String(contentsOfFile: Self.kinds[2].profile, encoding: .utf8)
        try Data((sample + "renewal = header\nrenewal-exp-add = 3600\nrenewal-deadline = 600\n").utf8).write(to: URL(fileURLWithPath: profile))
        let minted = try CLI.run(["mint", "cdn", "--profile", profile, "--resource", "TNT"] + Self.issued)
        try #require(minted.status == 0, "\(minted.stderr)")
        let header = String(try #require(minted.stdout.split(separator: "\n").first { $0.hasPrefix("CTA-Common-Access-Token: ") }))
        // Issued at 12:00 for 14400 s: exp 16:00, the window 15:50 to 16:00.
        let cases = [
            ("2026-01-15T12:03:00Z", "not yet due: the window opens at 1768492200 = 2026-01-15T15:50:00Z"),
            ("2026-01-15T15:50:00Z", "within its renewal window at now (1768492200 <= now < 1768492800)"),
            ("2026-01-15T15:59:59Z", "within its renewal window at now"),
            ("2026-01-15T16:00:00Z", "past its window: expired, too late to renew"),
        ]
        for (now, expected) in cases {
            let result = try CLI.run(["inspect", header, "--now", now])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(
                result.stdout.contains("renewal  catr header, expadd 3600 s, deadline 600 s, header CTA-Common-Access-Token; "),
                "\(result.stdout)"
            )
            #expect(result.stdout.contains(expected), "\(now): \(result.stdout)")
        }
        let result = try CLI.run(["inspect", header, "--now", "2026-01-15T15:55:00Z"])
        #expect(
            result.stdout.contains("323 /catr/: {0 /type/: 2, 1 /expadd/: 3600, 2 /deadline/: 600, 4 /header-name/: \"CTA-Common-Access-Token\"}"),
            "\(result.stdout)"
        )
        let json = try Self.object(try CLI.run(["inspect", "--format", "jsonl", header, "--now", "2026-01-15T15:55:00Z"]))
        let window = try #require(json["renewalWindow"] as? [String: String])
        #expect(window == ["opens": "2026-01-15T15:50:00Z", "closes": "2026-01-15T16:00:00Z"])
        // Verified with the profile, at a time in the window: valid, and due.
        let verified = try CLI.run(["verify", "--profile", profile, header, "--now", "2026-01-15T15:55:00Z"])
        #expect(verified.status == 0 && verified.stdout.contains("within its renewal window"), "\(verified.stdout)\(verified.stderr)")
    }

    @Test func twoTokensInOnePasteAreInvalidTokenFormatNamingThem() throws {
        let akamai = try Self.minted(Self.kinds[0]).trimmingCharacters(in: .whitespacesAndNewlines)
        let cat = try #require(try Self.minted(Self.kinds[2]).split(separator: "\n").last)
        let result = try CLI.run(["inspect", "--format", "jsonl", akamai + "\n" + cat])
        #expect(result.status == 1)
        let reason = try Self.object(result)["reason"] as? String ?? ""
        #expect(reason.contains("two tokens of different kinds") && reason.contains("akamai") && reason.contains("cat"), "\(reason)")
    }

    @Test func hostilePastesAreEscaped() throws {
        // A CloudFront policy whose Resource holds an escape sequence and a line break (JSON
        // escapes, so the policy reads), in a Cookie line: inspect shows every field.
        let policy =
            #"{"Statement":[{"Resource":"https://x.test/\u001b[2J\u202e\nFAKE VALID_TOKEN","Condition":{"DateLessThan":{"AWS:EpochTime":1768500000}}}]}"#
        let encoded = Data(policy.utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "=", with: "_").replacingOccurrences(of: "/", with: "~")
        let cookie = "Cookie: CloudFront-Policy=\(encoded); CloudFront-Signature=AAAA; CloudFront-Key-Pair-Id=K2JCJMDEHXQW5F"
        let shown = try CLI.run(["inspect", cookie] + Self.checked)
        #expect(shown.status == 0, "\(shown.stdout)\(shown.stderr)")
        #expect(shown.stdout.contains("\\x1b[2J") && shown.stdout.contains("\\u{202E}"), "\(shown.stdout)")
        #expect(!shown.stdout.contains("\u{1B}") && !shown.stdout.contains("\u{202E}"))
        #expect(!shown.stdout.split(separator: "\n").contains { $0.hasPrefix("FAKE") })
        // A line that is no token, after a cookie line: the reason quotes it, escaped.
        let forced = try CLI.run(["verify", "--key", "Samples/cdn/test-only-akamai.hex", "Cookie: a=b\n\u{1B}]52;c;AAAA\u{07}FAKE"] + Self.checked)
        #expect(forced.status == 1)
        #expect(forced.stdout.contains("INVALID_TOKEN_FORMAT") && forced.stdout.contains("\\x1b]52"), "\(forced.stdout)")
        #expect(!forced.stdout.contains("\u{1B}") && !forced.stdout.contains("\u{07}"))
    }

    /// Every row of Samples/README.md's CDN table holds, through the real binary.
    @Test func everyCDNSampleRowHolds() throws {
        let readme = try String(contentsOf: CLI.packageRoot.appendingPathComponent("Samples/README.md"), encoding: .utf8)
        let rows = readme.split(separator: "\n").map { $0.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) } }
            .filter { $0.count == 5 && $0[0].hasPrefix("`cdn/") }
        #expect(rows.count == 6)
        #expect(Set(rows.map { $0[2] }).count == 4, "a profile of each kind")
        func unquoted(_ cell: String) -> String { cell.trimmingCharacters(in: CharacterSet(charactersIn: "`")) }
        for row in rows {
            let url = row[3].hasPrefix("`") ? ["--url", unquoted(row[3])] : []
            let result = try CLI.run(
                ["verify", "--format", "jsonl", "--profile", "Samples/" + unquoted(row[2]), "@Samples/" + unquoted(row[0])]
                    + url + Self.checked
            )
            #expect(try Self.object(result)["status"] as? String == row[4], "\(row): \(result.stdout)")
        }
    }

    @Test func cdnOptionsOutsideACDNRunAndConflictsAreUsageErrors() throws {
        let token = "@Samples/tokens/valid.txt"
        let withProfile = try CLI.run(["verify", "--profile", Self.kinds[0].profile, token] + Self.checked)
        #expect(withProfile.status == 64, "\(withProfile.stderr)")
        #expect(withProfile.stderr.contains("--profile is for CDN tokens"))
        let withURL = try CLI.run(["verify", "--key", "Samples/keys/trusted", "--url", "https://a.test/x", token] + Self.checked)
        #expect(withURL.status == 64 && withURL.stderr.contains("--url is for CDN tokens"))
        let paste = try Self.minted(Self.kinds[0])
        let mixed = try CLI.run(["verify", "--profile", Self.kinds[0].profile, "-", token] + Self.checked, stdin: paste)
        #expect(mixed.status == 64 && mixed.stderr.contains("mix CDN tokens"), "\(mixed.stderr)")
        let otherKind = try CLI.run(["verify", "--profile", Self.kinds[0].profile, "--kind", "cat"] + Self.checked, stdin: paste)
        #expect(otherKind.status == 64 && otherKind.stderr.contains("is for akamai tokens"), "\(otherKind.stderr)")
        let missing = try CLI.run(["verify", "--profile", "Samples/cdn/no-such.profile"] + Self.checked, stdin: paste)
        #expect(missing.status == 2, "\(missing.stderr)")
        let wrongKey = try CLI.run(["verify", "--key", "Samples/cdn/test-only-cloudfront-rsa2048.pem"] + Self.checked, stdin: paste)
        #expect(wrongKey.status == 2 && wrongKey.stderr.contains("--key for a akamai token"), "\(wrongKey.stderr)")
        let badURL = try CLI.run(["verify", "--profile", Self.kinds[0].profile, "--url", "ftp://x"] + Self.checked, stdin: paste)
        #expect(badURL.status == 64)
    }
}
