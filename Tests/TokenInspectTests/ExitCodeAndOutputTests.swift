import Foundation
import Testing

/// docs/DESIGN.md#the-cli-contract as scripts see it: exit codes, JSON/JSONL shapes, stdin, --jobs, colour.
@Suite struct ExitCodeAndOutputTests {
    static let valid = "@Samples/tokens/valid.txt"
    static let invalid = "@Samples/tokens/invalid.txt"

    @Test func exitCodes() throws {
        #expect(try CLI.run(["verify"] + CLI.sampleFlags + [Self.valid]).status == 0)
        #expect(try CLI.run(["verify"] + CLI.sampleFlags + [Self.valid, Self.invalid]).status == 1)
        let unreadable = try CLI.run(["verify"] + CLI.sampleFlags + ["@Samples/tokens/no-such-file.txt"])
        #expect(unreadable.status == 2)
        #expect(unreadable.stderr.contains("no-such-file.txt"))
        let badKey = try CLI.run(["verify", "--key", "Samples/README.md", Self.valid])
        #expect(badKey.status == 2)
        #expect(badKey.stderr.contains("Samples/README.md"))
        let missingKey = try CLI.run(["verify", "--key", "Samples/keys/nope.pem", Self.valid])
        #expect(missingKey.status == 2)
        let weakKey = try CLI.run(["verify", "--key", "Samples/keys/test-rsa1024.pub.pem", Self.valid])
        #expect(weakKey.status == 2)
        #expect(weakKey.stderr.contains("--allow-insecure-keys"))
        let empty = try CLI.run(["verify"] + CLI.sampleFlags + ["-"], stdin: "\n  \n")
        #expect(empty.status == 2)
        #expect(empty.stderr.contains("no token found"))
        #expect(try CLI.run(["verify", "--bogus-flag", Self.valid]).status == 64)
        #expect(try CLI.run(["verify", Self.valid]).status == 64)  // no --key
        #expect(try CLI.run(["verify"] + CLI.sampleFlags + ["--now", "yesterday", Self.valid]).status == 64)
        // Undecodable but non-blank input is not "nothing": it gets a verdict.
        let garbage = try CLI.run(["verify"] + CLI.sampleFlags + ["-"], stdin: "garbage\n")
        #expect(garbage.status == 1)
        #expect(garbage.stdout.contains("INVALID_TOKEN_FORMAT"))
        // inspect: 0 when everything decoded, even without keys.
        #expect(try CLI.run(["inspect", Self.valid]).status == 0)
        #expect(try CLI.run(["inspect", Self.invalid]).status == 1)
    }

    @Test func jsonAndJSONLCarryTheSpecFieldsForEveryKind() throws {
        let jsonl = try CLI.run(["verify", "--format", "jsonl"] + CLI.sampleFlags + [Self.valid, "@Samples/tokens/rest-v2.json"])
        let objects = try CLI.jsonLines(jsonl.stdout)
        #expect(objects.count == 19)
        let required = [
            "input", "status", "reason", "kind", "root", "issuedAt", "expiresAt", "requestorID", "resourceID", "mvpdID", "fingerprint", "fields",
        ]
        for object in objects {
            for key in required { #expect(object.keys.contains(key), "missing \(key)") }
            #expect(object["status"] as? String == "VALID_TOKEN")
            #expect((object["expiresAt"] as? String)?.hasSuffix("Z") == true)
        }
        #expect(objects.map { $0["input"] as? Int } == Array(1...19).map { Optional($0) })
        let byKind = Dictionary(grouping: objects) { $0["kind"] as? String ?? "" }
        #expect(Set(byKind.keys) == ["media", "authentication", "authorization"])
        let media = try #require(byKind["media"]?.first)
        #expect(media["root"] as? String == "authToken")
        #expect(media["issuedAt"] as? String == "2026-01-15T12:00:00Z")
        #expect(media["expiresAt"] as? String == "2026-01-15T12:07:00Z")
        #expect((media["fields"] as? [String: Any])?["ttl"] as? String == "420000")
        let authz = try #require(byKind["authorization"]?.first)
        #expect(authz["resourceID"] as? String == "TNT")
        #expect(authz["mvpdID"] as? String == "Comcast_SSO")
        #expect((authz["fingerprint"] as? String)?.count == 64)
        #expect((authz["fields"] as? [String: Any])?["simpleTokenDeviceID/simpleTokenFingerprint"] as? String == authz["fingerprint"] as? String)
        let authn = try #require(byKind["authentication"]?.first)
        #expect(authn["issuedAt"] is NSNull)
        #expect(authn["resourceID"] is NSNull)
        #expect(authn["requestorID"] as? String == "TNT")
        // The RSS resource comes out exactly as the issuer wrote it.
        let rss = try #require(objects.first { ($0["resourceID"] as? String)?.hasPrefix("<rss") == true })
        #expect((rss["resourceID"] as? String)?.contains("<![CDATA[Dia 2]]>") == true)

        let json = try CLI.run(["verify", "--format", "json"] + CLI.sampleFlags + [Self.valid, "@Samples/tokens/rest-v2.json"])
        let array = try #require(JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        #expect(array.count == 19)
        #expect(json.stderr.contains("19 tokens: 19 VALID_TOKEN"))
        let emptyJSON = try CLI.run(["verify", "--format", "json"] + CLI.sampleFlags + ["garbage"])
        #expect((try JSONSerialization.jsonObject(with: Data(emptyJSON.stdout.utf8)) as? [Any])?.count == 1)
    }

    @Test func formatErrorsInJSONCarryTheErrorCode() throws {
        let result = try CLI.run(["verify", "--format", "jsonl"] + CLI.sampleFlags + [Self.invalid])
        let objects = try CLI.jsonLines(result.stdout)
        let statuses = objects.compactMap { $0["status"] as? String }
        #expect(
            statuses == [
                "INVALID_TOKEN_FORMAT", "INVALID_TOKEN_FORMAT", "INVALID_SIGNATURE", "INVALID_SIGNATURE", "TOKEN_EXPIRED",
                "TOKEN_NOT_YET_VALID", "INVALID_REQUESTOR_ID", "INVALID_RESOURCE_ID", "UNTRUSTED_MVPD", "DEVICE_MISMATCH",
                "VALID_TOKEN", "TOKEN_REPLAYED",
            ]
        )
        #expect((objects[1]["error"] as? [String: Any])?["code"] as? String == "unencodedPlus")
        #expect((objects[1]["reason"] as? String)?.contains("'+'") == true)
    }

    @Test func stdinIsReadWhenGivenAsDash() throws {
        let path = CLI.packageRoot.appendingPathComponent("Samples/tokens/valid.txt").path
        let result = try CLI.run(["verify", "--format", "jsonl"] + CLI.sampleFlags + ["-"], stdinFile: path)
        #expect(result.status == 0)
        #expect(try CLI.jsonLines(result.stdout).count == 17)
        // And by default when stdin is not a terminal.
        let implicit = try CLI.run(["verify", "--format", "jsonl"] + CLI.sampleFlags, stdinFile: path)
        #expect(try CLI.jsonLines(implicit.stdout).count == 17)
    }

    @Test func jobsTwoGivesTheSameOutputAsJobsOne() throws {
        let inputs = [Self.valid, Self.invalid, "@Samples/tokens/rest-v1.json", Self.valid]
        let one = try CLI.run(["verify", "--format", "jsonl", "--jobs", "1"] + CLI.sampleFlags.filter { $0 != "--reject-replays" } + inputs)
        let two = try CLI.run(["verify", "--format", "jsonl", "--jobs", "2"] + CLI.sampleFlags.filter { $0 != "--reject-replays" } + inputs)
        #expect(one.stdout == two.stdout)
        #expect(!one.stdout.isEmpty)
        let text1 = try CLI.run(["inspect", "--jobs", "1", Self.valid, Self.invalid])
        let text2 = try CLI.run(["inspect", "--jobs", "2", Self.valid, Self.invalid])
        #expect(text1.stdout == text2.stdout)
    }

    /// Many batches in flight at once: every record comes out once, in input
    /// order, whatever thread rendered it, in every format.
    @Test func jobsKeepInputOrderAcrossManyBatches() throws {
        let root = CLI.packageRoot.appendingPathComponent("Samples/tokens")
        // The 17 valid and 12 failing samples, 50 times over: 1,450 records
        // whose verdicts differ from record to record, so a reordering shows.
        let samples =
            try String(contentsOf: root.appendingPathComponent("valid.txt"), encoding: .utf8)
            + String(contentsOf: root.appendingPathComponent("invalid.txt"), encoding: .utf8)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("tokeninspect-order-\(UUID().uuidString).txt").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(String(repeating: samples, count: 50).utf8).write(to: URL(fileURLWithPath: path))
        let flags = CLI.sampleFlags.filter { $0 != "--reject-replays" }

        let jsonl = try CLI.run(["verify", "--format", "jsonl", "--jobs", "1"] + flags + ["@" + path])
        let objects = try CLI.jsonLines(jsonl.stdout)
        #expect(objects.count == 29 * 50)
        let inputsInOrder = objects.enumerated().allSatisfy { $0.element["input"] as? Int == $0.offset + 1 }
        #expect(inputsInOrder)
        let statuses = objects.map { $0["status"] as? String ?? "" }
        let repeatsEvery29 = statuses.indices.allSatisfy { statuses[$0] == statuses[$0 % 29] }
        #expect(repeatsEvery29)
        #expect(Set(statuses).count > 5)

        for format in ["jsonl", "json", "text"] {
            let one = try CLI.run(["verify", "--format", format, "--jobs", "1"] + flags + ["@" + path])
            let three = try CLI.run(["verify", "--format", format, "--jobs", "3"] + flags + ["@" + path])
            #expect(one.status == 1)
            #expect(three.status == 1)
            let same = one.stdout == three.stdout && one.stderr == three.stderr
            #expect(same, "--format \(format): --jobs 3 differs from --jobs 1")
        }
        let json = try CLI.run(["verify", "--format", "json", "--jobs", "2"] + flags + ["@" + path])
        let array = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]]
        #expect(array?.count == 29 * 50)
    }

    @Test func noColourWhenStdoutIsNotATerminalOrNO_COLORIsSet() throws {
        let piped = try CLI.run(["verify"] + CLI.sampleFlags + [Self.valid, Self.invalid])
        #expect(!piped.stdout.contains("\u{1B}["))
        // Under a pseudo-terminal colour appears, unless NO_COLOR is set.
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/script") else { return }
        let command = ([CLI.binary.path, "verify"] + CLI.sampleFlags + [Self.invalid]).joined(separator: " ")
        let tty = try CLI.run(["--version"])  // warm-up: the binary exists
        #expect(tty.status == 0)
        let colored = try runUnderPTY(command, noColor: false)
        #expect(colored.contains("\u{1B}[31;1mINVALID_SIGNATURE"))
        let plain = try runUnderPTY(command, noColor: true)
        #expect(!plain.contains("\u{1B}["))
        #expect(plain.contains("INVALID_SIGNATURE"))
    }

    @Test func longRunsShowProgressOnATerminalStderr() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/script") else { return }
        let token = try String(contentsOf: CLI.packageRoot.appendingPathComponent("Samples/tokens/valid.txt"), encoding: .utf8)
            .split(separator: "\n")[4]
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("tokeninspect-progress-\(UUID().uuidString).txt").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        // Enough tokens to run past the one-second delay before progress shows.
        try String(repeating: token + "\n", count: 60_000).write(toFile: path, atomically: true, encoding: .utf8)
        let flags = CLI.sampleFlags.filter { $0 != "--reject-replays" }.joined(separator: " ")
        let output = try runUnderPTY("\(CLI.binary.path) verify --format jsonl \(flags) @\(path) > /dev/null", noColor: false)
        #expect(output.contains("tokens…"))
        #expect(output.contains("\r\u{1B}[K"))  // the line is cleared at the end
        #expect(output.contains("60000 tokens: 60000 VALID_TOKEN"))
    }

    private func runUnderPTY(_ command: String, noColor: Bool) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        process.arguments = ["-qec", command, "/dev/null"]
        process.currentDirectoryURL = CLI.packageRoot
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "NO_COLOR")
        if noColor { env["NO_COLOR"] = "1" }
        process.environment = env
        let out = Pipe()
        process.standardOutput = out
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    @Test func aHundredThousandTokensStreamWithFlatMemory() throws {
        let token = try String(contentsOf: CLI.packageRoot.appendingPathComponent("Samples/tokens/valid.txt"), encoding: .utf8)
            .split(separator: "\n")[4]  // a Base64 media token
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("tokeninspect-100k-\(UUID().uuidString).txt").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let line = Data((token + "\n").utf8)
        try #require(FileManager.default.createFile(atPath: path, contents: nil))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        var block = Data()
        for _ in 0..<1000 { block.append(line) }
        for _ in 0..<100 { handle.write(block) }
        try handle.close()
        let flags = CLI.sampleFlags.filter { $0 != "--reject-replays" }
        let result = try CLI.run(["verify", "--format", "jsonl", "--jobs", "2"] + flags + ["@" + path], measuresMemory: true)
        #expect(result.status == 0)
        #expect(result.maxRSSKiB > 1024)  // measured at all
        #expect(result.stdout.utf8.reduce(0) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) } == 100_000)
        // stderr is not a terminal here: no progress line, just the summary.
        #expect(!result.stderr.contains("tokens…"))
        #expect(result.stderr.contains("100000 tokens: 100000 VALID_TOKEN"))
        // 70 MB of input; flat memory means the peak does not grow with it.
        print("peak RSS for 100,000 tokens: \(result.maxRSSKiB) KiB")
        #expect(result.maxRSSKiB < 48 * 1024, "peak RSS \(result.maxRSSKiB) KiB")
    }
}
