import EntitlementTokens
import Foundation
import Testing

/// docs/DESIGN.md#what-people-paste: the token is found in whatever it was captured
/// in — each form × each token kind × raw XML and Base64 — and every row
/// verifies through the binary, with a warning naming what was undone.
@Suite struct PastedFormsTests {
    static let verifyFlags = ["--key", "Samples/keys/trusted", "--now", "2026-01-15T12:03:00Z", "--format", "jsonl"]

    /// A fresh token of `kind`, signed by a sample key; `& ` in a field so
    /// that raw XML needs real encoding in a URL.
    static func mint(kind: String, encoding: String) throws -> String {
        let minted = try CLI.run([
            "mint", "--key", "Samples/keys/test-rsa2048.pem", "--kind", kind, "--requestor", "TNT",
            "--resource", "TNT", "--mvpd", "Comcast_SSO", "--issue-time", "2026-01-15T12:00:00Z",
            "--device-id", "box-1", "--encoding", encoding, "--field", "extra/note=minted & kept",
        ])
        try #require(minted.status == 0, "\(minted.stderr)")
        return minted.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// encodeURIComponent-like: everything but letters and digits as `%XX`.
    static func percentEncoded(_ text: String) -> String {
        text.addingPercentEncoding(
            withAllowedCharacters: CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.~")
        )!
    }

    /// As `URLSearchParams` and Python's `urlencode` write a value: `+` for a space.
    static func formEncoded(_ text: String) -> String {
        percentEncoded(text).replacingOccurrences(of: "%20", with: "+")
    }

    /// As `base64` writes a file: 76 columns.
    static func wrapped(_ base64: String, width: Int = 76) -> String {
        var lines: [Substring] = []
        var rest = Substring(base64)
        while !rest.isEmpty {
            lines.append(rest.prefix(width))
            rest = rest.dropFirst(width)
        }
        return lines.joined(separator: "\n")
    }

    /// Each pasted form of `token`, with the words its warning must contain.
    static func pastedForms(of token: String) -> [(name: String, text: String, warning: String)] {
        [
            ("url", "https://cdn.example.com/play/master.m3u8?resource=TNT&token=\(percentEncoded(token))&x=y#t=10", "'token' parameter of the URL"),
            ("query string", "resource=TNT&auth=\(percentEncoded(token))&format=m3u8", "'auth' parameter of the query string"),
            ("form-encoded", "resource=TNT&token=\(formEncoded(token))", "'token' parameter"),
            ("twice percent-encoded", percentEncoded(percentEncoded(token)), "percent-encoded twice"),
            ("bearer", "Bearer \(token)", "Bearer"),
            (
                "json log value", "\"\(token.replacingOccurrences(of: "/", with: "\\/"))\",",
                token.contains("/") ? "undid its JSON string escapes" : "double quotes and trailing comma"
            ),
            ("single quotes", "'\(token)'", "single quotes"),
            ("byte order mark", "\u{FEFF}\(token)", token.hasPrefix("<") ? "" : "byte order mark"),
        ]
    }

    @Test(arguments: ["media", "authentication", "authorization"], ["raw", "base64"])
    func everyPastedFormVerifies(kind: String, encoding: String) throws {
        let token = try Self.mint(kind: kind, encoding: encoding)
        let forms = Self.pastedForms(of: token)

        // As arguments: one verdict per argument.
        let run = try CLI.run(["verify"] + Self.verifyFlags + forms.map(\.text))
        let objects = try CLI.jsonLines(run.stdout)
        try #require(objects.count == forms.count, "\(run.stdout)\(run.stderr)")
        for (form, object) in zip(forms, objects) {
            #expect(object["status"] as? String == "VALID_TOKEN", "\(form.name): \(object["reason"] ?? "")")
            #expect(object["kind"] as? String == kind)
            let warnings = object["warnings"] as? [String] ?? []
            if !form.warning.isEmpty {
                #expect(warnings.contains { $0.contains(form.warning) }, "\(form.name): \(warnings)")
            }
        }
        if encoding == "raw" {
            #expect((objects[2]["warnings"] as? [String] ?? []).contains { $0.contains("read '+' as a space") })
        }

        // In a file, one per line, then the token Base64-wrapped as `base64` writes
        // it, then the plain token: the wrapped block is one record, the lines
        // around it one each.
        let base64 = encoding == "raw" ? Data(token.utf8).base64EncodedString() : token
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("pasted-\(UUID().uuidString).txt")
        defer { try? FileManager.default.removeItem(at: file) }
        let lines = forms.map(\.text) + [Self.wrapped(base64), token]
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: file)
        let fromFile = try CLI.run(["verify"] + Self.verifyFlags + ["@" + file.path])
        let records = try CLI.jsonLines(fromFile.stdout)
        try #require(records.count == forms.count + 2, "\(fromFile.stdout)")
        for record in records {
            #expect(record["status"] as? String == "VALID_TOKEN", "input \(record["input"] ?? ""): \(record["reason"] ?? "")")
        }
        let wrappedWarnings = records[forms.count]["warnings"] as? [String] ?? []
        let lineCount = (base64.count + 75) / 76
        #expect(wrappedWarnings.contains("joined Base64 wrapped over \(lineCount) lines"), "\(wrappedWarnings)")
        #expect(records[forms.count + 1]["line"] as? Int == forms.count + lineCount + 1)

        // The same through stdin.
        let fromStdin = try CLI.run(["verify"] + Self.verifyFlags, stdin: lines.joined(separator: "\r\n"))
        #expect(try CLI.jsonLines(fromStdin.stdout).map { $0["status"] as? String } == Array(repeating: "VALID_TOKEN", count: forms.count + 2))
    }

    @Test func paramNamesTheParameterThatHoldsTheToken() throws {
        let token = try Self.mint(kind: "media", encoding: "base64")
        let url = "https://cdn.example.com/play?resource=TNT&t=\(Self.percentEncoded(token))"
        let missing = try CLI.run(["verify"] + Self.verifyFlags + [url])
        #expect(missing.status == 1)
        let error = try #require(try CLI.jsonLines(missing.stdout).first?["error"] as? [String: Any])
        #expect(error["code"] as? String == "tokenParameterMissing")
        #expect((error["message"] as? String)?.contains("its parameters are resource, t") == true)
        let named = try CLI.run(["verify"] + Self.verifyFlags + ["--param", "t", url])
        #expect(named.status == 0, "\(named.stdout)")
        #expect(try CLI.run(["verify"] + Self.verifyFlags + ["--param", "a=b", url]).status == 64)
    }

    /// docs/DESIGN.md#transport-forms, form 4: unwrapping never repairs a `+` that arrived as a space.
    @Test func aLostPlusInsideAURLIsStillRefused() throws {
        var token = try Self.mint(kind: "media", encoding: "base64")
        for _ in 0..<20 where !token.contains("+") {
            token = try Self.mint(kind: "media", encoding: "base64")  // a signature without '+' is rare; try another
        }
        try #require(token.contains("+"))
        let damaged = token.replacingOccurrences(of: "+", with: " ")
        let run = try CLI.run(["verify"] + Self.verifyFlags + ["https://cdn.example.com/play?resource=TNT&token=\(damaged)"])
        let object = try #require(try CLI.jsonLines(run.stdout).first)
        #expect(object["status"] as? String == "INVALID_TOKEN_FORMAT")
        #expect((object["error"] as? [String: Any])?["code"] as? String == "unencodedPlus")
        #expect((object["reason"] as? String)?.contains("'token' parameter of the URL") == true)
    }

    /// A file of one token per line never has its lines joined, even when
    /// every token has the same length.
    @Test func oneTokenPerLineStaysOneRecordPerLine() throws {
        var tokens: [String] = []
        for guid in ["0000000000000001", "0000000000000002", "0000000000000003"] {
            let minted = try CLI.run([
                "mint", "--key", "Samples/keys/test-rsa2048.pem", "--requestor", "TNT", "--resource", "TNT",
                "--session-guid", guid, "--issue-time", "2026-01-15T12:00:00Z", "--encoding", "base64",
            ])
            tokens.append(minted.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        try #require(Set(tokens.map(\.count)).count == 1)
        let run = try CLI.run(["verify"] + Self.verifyFlags, stdin: tokens.joined(separator: "\n") + "\n")
        let records = try CLI.jsonLines(run.stdout)
        #expect(records.map { $0["line"] as? Int } == [1, 2, 3])
        #expect(records.allSatisfy { $0["status"] as? String == "VALID_TOKEN" && ($0["warnings"] as? [String])?.isEmpty == true })
    }

    /// `base64` output saved by an editor that adds a BOM: still one record.
    @Test func aByteOrderMarkBeforeWrappedBase64() throws {
        let token = try Self.mint(kind: "media", encoding: "raw")
        let input = "\u{FEFF}" + Self.wrapped(Data(token.utf8).base64EncodedString()) + "\n"
        let run = try CLI.run(["verify"] + Self.verifyFlags, stdin: input)
        let records = try CLI.jsonLines(run.stdout)
        #expect(records.count == 1, "\(run.stdout)")
        #expect(records.first?["status"] as? String == "VALID_TOKEN")
    }

    /// Wrapped tokens back to back, the first exactly a whole number of lines
    /// long: the run ends where the token is whole, not at the next short line.
    @Test func wrappedTokensBackToBackSplitWhereEachIsWhole() throws {
        let token = try Self.mint(kind: "authorization", encoding: "raw")
        var padded = token
        // Find a width (a multiple of 4, ≥ 60) that divides the Base64 exactly.
        var base64 = Data(padded.utf8).base64EncodedString()
        var width = 0
        for candidate in stride(from: 60, through: 256, by: 4) where base64.count % candidate == 0 {
            width = candidate
            break
        }
        while width == 0 {
            padded += " "
            base64 = Data(padded.utf8).base64EncodedString()
            for candidate in stride(from: 60, through: 256, by: 4) where base64.count % candidate == 0 {
                width = candidate
                break
            }
        }
        let input = Self.wrapped(base64, width: width) + "\n" + Self.wrapped(base64, width: width) + "\n"
        let run = try CLI.run(["verify"] + Self.verifyFlags, stdin: input)
        let records = try CLI.jsonLines(run.stdout)
        #expect(records.count == 2, "\(run.stdout)")
        #expect(records.allSatisfy { $0["status"] as? String == "VALID_TOKEN" })
    }

    /// Hostile wrappings cost linear time and end in a typed error: quotes
    /// nested far deeper than the layers unwrapped, a query of many parameters.
    @Test func hostileWrappingsEndInATypedError() throws {
        let decoder = TokenDecoder()
        let quotes = String(repeating: "\"", count: 100_000) + "PHNpZ25hdHVyZUluZm8+" + String(repeating: "\"", count: 100_000)
        #expect(throws: TokenError.self) { try decoder.decode(quotes) }
        let query = "https://x/?" + Array(repeating: "a=1", count: 50_000).joined(separator: "&")
        do {
            _ = try decoder.decode(query)
            Issue.record("a query without a token decoded")
        } catch {
            #expect(error.code == .tokenParameterMissing)
            #expect(error.message.count < 600)
        }
        // A JSON escape cut short inside double quotes is not unwrapped.
        #expect(throws: TokenError.self) { try decoder.decode("\"PHNp\\u12\"") }
    }

    /// The library's entry point for captured text does the same unwrapping.
    @Test func theLibraryVerifierFindsTheTokenToo() throws {
        let token = try Self.mint(kind: "media", encoding: "base64")
        let ring = try KeyRing.load(
            paths: [CLI.packageRoot.appendingPathComponent("Samples/keys/trusted").path],
            options: KeyLoadingOptions(),
            now: TokenTimestamp(millisecondsSince1970: 1_768_478_580_000)!
        )
        let verifier = TokenVerifier(
            signature: .trustedKeys(ring),
            policy: VerificationPolicy(clock: {
                TokenTimestamp(millisecondsSince1970: 1_768_478_580_000)!
            })
        )
        let verdict = verifier.verify("https://cdn.example.com/play?resource=TNT&token=\(Self.percentEncoded(token))")
        #expect(verdict.status == .validToken, "\(verdict.reason)")
        #expect(verdict.token?.warnings == ["took the token from the 'token' parameter of the URL"])
    }
}
