import Foundation
import Testing

/// `tokeninspect har` through the real binary: exit statuses, the JSON
/// object scripts rely on, a HAR given to inspect/verify, and the sample.
@Suite struct HARCLITests {
    static let sample = "Samples/har/cookie-expired.har"

    static func scratchFile(_ text: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("har-\(UUID().uuidString).har").path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func aCaptureThatBrokeExitsOneAndOneThatPlayedExitsZero() throws {
        let broke = try CLI.run(["har", Self.sample])
        #expect(broke.status == 1, "\(broke.stderr)")
        #expect(broke.stdout.contains("1. COOKIE_EXPIRED (#7, #6)"))
        let played = try Self.scratchFile(
            """
            {"log":{"version":"1.2","entries":[{"startedDateTime":"2026-01-15T12:01:00Z","request":{"method":"GET","url":"https://a.example.test/x.ts","headers":[]},"response":{"status":200,"headers":[]}}]}}
            """
        )
        defer { try? FileManager.default.removeItem(atPath: played) }
        let result = try CLI.run(["har", played])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    }

    @Test func jsonIsOneObjectWithThePinnedMembers() throws {
        let result = try CLI.run(["har", "--format", "json", Self.sample])
        #expect(result.status == 1)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let entries = try #require(object["entries"] as? [[String: Any]])
        #expect(entries.map { $0["number"] as? Int } == [1, 2, 3, 4, 5, 7, 6, 8])
        #expect(entries.allSatisfy { $0["time"] is String && $0["method"] is String && $0["url"] is String && $0["status"] is Int })
        let credentials = try #require(object["credentials"] as? [[String: Any]])
        #expect(
            credentials.allSatisfy {
                $0["kind"] is String && $0["where"] is String && $0["entry"] is Int && $0["fingerprint"] is String && $0["verdict"] is String
            }
        )
        let findings = try #require(object["findings"] as? [[String: Any]])
        #expect(findings.map { $0["kind"] as? String } == ["COOKIE_EXPIRED", "TOKEN_REUSED"])
        #expect(findings[0]["entries"] as? [Int] == [7, 6])
        // No credential value reaches the report: the cookie's digest and the media token are replaced or absent.
        #expect(!result.stdout.contains("XFGrayT_cEdaNdjae509gA"))
        #expect(!result.stdout.contains("PHNpZ25hdHVyZUluZm8"))
    }

    @Test func withTheKeysEveryCredentialIsJudged() throws {
        let result = try CLI.run(
            [
                "har", "--format", "json", "--key", "Samples/keys/trusted", "--profile", "Samples/cdn/nginx-secure-link.profile", Self.sample,
            ],
            environment: ["CREDENTIALS_DIRECTORY": CLI.packageRoot.path]
        )
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let verdicts = (object["credentials"] as? [[String: Any]] ?? []).filter { $0["kind"] as? String != "x-token-status" }.compactMap {
            $0["verdict"] as? String
        }
        #expect(!verdicts.isEmpty && verdicts.allSatisfy { $0 == "VALID_TOKEN" }, "\(verdicts) \(result.stderr)")
    }

    @Test(arguments: [
        ("[1,2]", "not a HAR: the document is not a JSON object"),
        ("{\"log\":{\"entries\":[],\"entries\":[]}}", "appears twice"),
        ("{\"log\":{}}", "the HAR's log has no entries array"),
        ("{\"log\":{\"entries\":[", "ends before it is complete"),
    ])
    func whatIsNotAHARExitsSixtyFive(text: String, message: String) throws {
        let path = try Self.scratchFile(text)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try CLI.run(["har", path])
        #expect(result.status == 65)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.contains(message), "\(result.stderr)")
    }

    /// A capture larger than the memory it may take (72 MB of Base64 segment bodies, 48 MiB
    /// allowed) is read: it was never held whole, and each body over the limit was skipped and said so.
    @Test func aLargeCaptureIsReadWithFlatMemory() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("large-\(UUID().uuidString).har").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        _ = FileManager.default.createFile(atPath: path, contents: nil)  // opened next, which throws if it is not there
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        let body = String(repeating: "QUFB", count: 2_250_000)  // 9 MB of Base64
        try handle.write(contentsOf: Data("{\"log\":{\"version\":\"1.2\",\"entries\":[".utf8))
        for index in 0..<8 {
            let entry = """
                \(index == 0 ? "" : ","){"startedDateTime":"2026-01-15T12:01:0\(index).000Z","request":{"method":"GET",\
                "url":"https://edge.example.test/hls/tnt/seg\(index).ts","headers":[]},"response":{"status":200,"headers":[],\
                "content":{"mimeType":"video/mp2t","encoding":"base64","text":"\(body)"}}}
                """
            try handle.write(contentsOf: Data(entry.utf8))
        }
        try handle.write(contentsOf: Data("]}}".utf8))
        try handle.close()
        let result = try CLI.run(["har", "--format", "json", path], measuresMemory: true)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.maxRSSKiB > 0 && result.maxRSSKiB < 48 * 1024, "peak RSS \(result.maxRSSKiB) KiB")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect((object["entries"] as? [Any])?.count == 8)
        let notes = (object["findings"] as? [[String: Any]] ?? []).filter { $0["kind"] as? String == "NOT_READ" }
        #expect(notes.count == 8 && notes.allSatisfy { ($0["message"] as? String)?.contains("a body of 9000000 bytes was skipped") == true })
    }

    @Test func stdinIsRead() throws {
        let result = try CLI.run(["har", "--format", "json", "-"], stdinFile: CLI.packageRoot.appendingPathComponent(Self.sample).path)
        #expect(result.status == 1)
        #expect(result.stdout.hasPrefix("{\"entries\":["))
    }

    @Test func usageErrorsExitSixtyFour() throws {
        #expect(try CLI.run(["har"]).status == 64)
        #expect(try CLI.run(["har", "a.har", "b.har"]).status == 64)
        #expect(try CLI.run(["har", "--format", "xml", Self.sample]).status == 64)
        #expect(try CLI.run(["har", "--leeway", "-1", Self.sample]).status == 64)
        let missing = try CLI.run(["har", "/nonexistent/capture.har"])
        #expect(missing.status == 2 && missing.stderr.contains("cannot read /nonexistent/capture.har"))
    }

    @Test(arguments: ["inspect", "verify"])
    func aHARGivenToInspectOrVerifyNamesTheHarCommand(command: String) throws {
        let result = try CLI.run([command, "--key", "Samples/keys/trusted", "@" + Self.sample])
        #expect(result.status == 64)
        #expect(result.stderr.contains("is a HAR capture, not a token: read it with tokeninspect har \(Self.sample)"), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
    }

    /// Samples/README.md's capture example is what the binary prints, line for line, run as written.
    @Test func theSamplesExampleIsWhatTheBinaryPrints() throws {
        let readme = try String(contentsOf: CLI.packageRoot.appendingPathComponent("Samples/README.md"), encoding: .utf8)
        let section = try #require(readme.components(separatedBy: "## A capture of a playback that broke").last)
        let block = try #require(section.components(separatedBy: "```console\n").dropFirst().first?.components(separatedBy: "```").first)
        let lines = block.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let command = try #require(lines.first?.split(separator: " ").map(String.init))
        #expect(command.prefix(2) == ["$", "tokeninspect"])
        let result = try CLI.run(Array(command.dropFirst(2)))
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stdout == lines.dropFirst().joined(separator: "\n"))
    }
}

/// `har --redact`: the capture written again with no secret that could play.
@Suite struct HARRedactCLITests {
    @Test func theRedactedCaptureHoldsNoRunOfTwelveBytesOfAnyCredential() throws {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("redacted-\(UUID().uuidString).har").path
        defer { try? FileManager.default.removeItem(atPath: output) }
        let result = try CLI.run(["har", "--format", "json", "--redact", output, HARCLITests.sample])
        #expect(result.status == 1, "\(result.stderr)")
        let redacted = try Data(contentsOf: URL(fileURLWithPath: output))
        let attributes = try FileManager.default.attributesOfItem(atPath: output)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        // Still a HAR of the same entries.
        let again = try CLI.run(["har", "--format", "json", output])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(again.stdout.utf8)) as? [String: Any])
        #expect((object["entries"] as? [Any])?.count == 8)
        // Every credential of the input, as it appears in it: the media token, the cookies' values.
        let input = try String(contentsOf: CLI.packageRoot.appendingPathComponent(HARCLITests.sample), encoding: .utf8)
        let har = try #require(try JSONSerialization.jsonObject(with: Data(input.utf8)) as? [String: Any])
        let entries = try #require((har["log"] as? [String: Any])?["entries"] as? [[String: Any]])
        var secrets: [String] = []
        for entry in entries {
            let request = entry["request"] as? [String: Any] ?? [:]
            let response = entry["response"] as? [String: Any] ?? [:]
            if let post = (request["postData"] as? [String: Any])?["text"] as? String,
                let body = try JSONSerialization.jsonObject(with: Data(post.utf8)) as? [String: Any], let token = body["token"] as? String
            {
                secrets.append(token)
            }
            for header in (request["headers"] as? [[String: String]] ?? []) + (response["headers"] as? [[String: String]] ?? [])
            where ["cookie", "set-cookie"].contains(header["name"]?.lowercased() ?? "") {
                for part in (header["value"] ?? "").split(separator: ";") {
                    let pair = part.split(separator: "=", maxSplits: 1)
                    if pair.count == 2, !["Domain", "Path", "Max-Age", "SameSite"].contains(pair[0].trimmingCharacters(in: .whitespaces)) {
                        secrets.append(String(pair[1]))
                    }
                }
            }
        }
        #expect(secrets.count >= 3)
        // Every 12-byte run of the whole output, then every 12-byte run of every secret looked up in it.
        let text = Array(redacted)
        let runs = Set((0...(text.count - 12)).map { Array(text[$0..<($0 + 12)]) })
        for secret in Set(secrets) {
            let bytes = Array(secret.utf8)
            guard bytes.count >= 12 else { continue }
            let left = (0...(bytes.count - 12)).filter { runs.contains(Array(bytes[$0..<($0 + 12)])) }
            #expect(left.isEmpty, "12 bytes of \(secret.prefix(16))… are left")
        }
        #expect(String(decoding: text, as: UTF8.self).contains("REDACTED-media-token-"))
    }

    @Test func redactNeedsAFileAndANewPath() throws {
        #expect(try CLI.run(["har", "--redact", "/tmp/x.har", "-"]).status == 64)
        #expect(try CLI.run(["har", "--redact", HARCLITests.sample, HARCLITests.sample]).status == 64)
    }
}

/// `har --format html`: one self-contained page, to stdout or to `--output FILE`.
@Suite struct HARHTMLCLITests {
    static func scratchPath(_ suffix: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("har-\(UUID().uuidString)\(suffix)").path
    }

    @Test func htmlGoesToStdoutWithTheSameExitStatus() throws {
        let result = try CLI.run(["har", "--format", "html", HARCLITests.sample])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("<!DOCTYPE html>\n"))
        #expect(result.stdout.contains("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'sha256-"))
        #expect(result.stdout.contains("<tr id=\"entry-7\">") && result.stdout.contains("<a href=\"#entry-7\">#7</a>"))
        #expect(result.stdout.contains("COOKIE_EXPIRED"))
        #expect(result.stdout.hasSuffix("</html>\n"))
    }

    @Test func outputWritesTheFileAndNothingToStdout() throws {
        let output = Self.scratchPath(".html")
        defer { try? FileManager.default.removeItem(atPath: output) }
        let result = try CLI.run(["har", "--format", "html", "--output", output, HARCLITests.sample])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        let page = try String(contentsOf: URL(fileURLWithPath: output), encoding: .utf8)
        #expect(page == (try CLI.run(["har", "--format", "html", HARCLITests.sample])).stdout)
        // --output takes the other formats too.
        let json = try CLI.run(["har", "--format", "json", "--output", output, HARCLITests.sample])
        #expect(json.status == 1 && json.stdout.isEmpty)
        #expect(try String(contentsOf: URL(fileURLWithPath: output), encoding: .utf8).hasPrefix("{\"entries\":["))
    }

    @Test func aPlayedCaptureExitsZeroAndANonHARSixtyFive() throws {
        let played = try HARCLITests.scratchFile(
            """
            {"log":{"version":"1.2","entries":[{"startedDateTime":"2026-01-15T12:01:00Z","request":{"method":"GET","url":"https://a.example.test/x.ts","headers":[]},"response":{"status":200,"headers":[]}}]}}
            """
        )
        defer { try? FileManager.default.removeItem(atPath: played) }
        let result = try CLI.run(["har", "--format", "html", played])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("No finding names a failure."))
        let notHAR = try HARCLITests.scratchFile("[1,2]")
        defer { try? FileManager.default.removeItem(atPath: notHAR) }
        let output = Self.scratchPath(".html")
        let refused = try CLI.run(["har", "--format", "html", "--output", output, notHAR])
        #expect(refused.status == 65 && refused.stderr.contains("not a HAR"))
        #expect(!FileManager.default.fileExists(atPath: output))
    }

    @Test func outputUsageErrorsAndAnUnwritablePath() throws {
        #expect(try CLI.run(["har", "--format", "html", "--output", HARCLITests.sample, HARCLITests.sample]).status == 64)
        #expect(try CLI.run(["har", "--format", "html", "--output"]).status == 64)
        let unwritable = try CLI.run(["har", "--format", "html", "--output", "/nonexistent/dir/report.html", HARCLITests.sample])
        #expect(unwritable.status == 2 && unwritable.stderr.contains("--output: cannot write /nonexistent/dir/report.html"))
    }
}
