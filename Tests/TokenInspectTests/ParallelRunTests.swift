import EntitlementTokens
import Foundation
import Testing

/// Issue 10, classes 3 and 4, through the binary: `--jobs` keeps memory
/// bounded in bytes whatever N and the record sizes, and the replay check is
/// decided in input order, so the first copy of a token is the accepted one.
@Suite struct ParallelRunTests {
    static func scratchFile(_ name: String) -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("tokeninspect-\(name)-\(UUID().uuidString)")
    }

    @Test(arguments: [1, 8, 64])
    func peakMemoryStaysBoundedWhateverTheJobsAndRecordSizes(jobs: Int) throws {
        // 160 lines of 262 KB: 42 MB of input that the old batching (16 × 8 × N
        // records) held whole at --jobs 64.
        let file = Self.scratchFile("big-lines")
        defer { try? FileManager.default.removeItem(at: file) }
        let line = String(repeating: "QUFB", count: 262_144 / 4) + "\n"
        try String(repeating: line, count: 160).write(to: file, atomically: false, encoding: .utf8)
        let result = try CLI.run(
            ["verify", "--insecure-skip-signature", "--jobs", String(jobs), "--format", "jsonl", "@\(file.path)"],
            measuresMemory: true
        )
        #expect(result.status == 1)
        #expect(result.stdout.split(separator: "\n").count == 160)
        #expect(result.maxRSSKiB > 1024)  // measured at all
        print("peak RSS, --jobs \(jobs), 160 × 262 KB lines: \(result.maxRSSKiB) KiB")
        #expect(result.maxRSSKiB < 64 * 1024, "peak RSS \(result.maxRSSKiB) KiB at --jobs \(jobs)")
    }

    /// The most records per byte an input can hold, on stdin. What the CLI reads
    /// ahead to tell credentials from tokens (1 MiB: half a million one-byte
    /// lines) was cut into one list of records before the first was verified
    /// (190 MiB at 700,000 lines), and an input that fits in it was cut into a
    /// list of every line to find its first (67 MiB at 500,000).
    @Test(arguments: [(500_000, 1), (700_000, 1), (700_000, 2)])
    func oneByteLinesOnStdinKeepMemoryFlat(lines: Int, jobs: Int) throws {
        let file = Self.scratchFile("one-byte-lines")
        defer { try? FileManager.default.removeItem(at: file) }
        var bytes = [UInt8](repeating: UInt8(ascii: "\n"), count: lines * 2)
        for index in stride(from: 0, to: bytes.count, by: 2) { bytes[index] = UInt8(ascii: "x") }
        try Data(bytes).write(to: file)
        let result = try CLI.run(
            ["verify", "--key", "Samples/keys/trusted", "--jobs", String(jobs), "--format", "jsonl", "-"],
            stdinFile: file.path,
            measuresMemory: true
        )
        #expect(result.status == 1)
        #expect(result.stderr.contains("\(lines) tokens: \(lines) INVALID_TOKEN_FORMAT"), "\(result.stderr.suffix(300))")
        #expect(result.maxRSSKiB > 1024)  // measured at all
        print("peak RSS, --jobs \(jobs), \(lines) one-byte lines on stdin: \(result.maxRSSKiB) KiB")
        #expect(result.maxRSSKiB < 48 * 1024, "peak RSS \(result.maxRSSKiB) KiB at --jobs \(jobs)")
    }

    /// Distinct valid media tokens, each several times at distances that put
    /// copies in the same chunk, across chunks and across batches.
    @Test(arguments: [1, 2, 8])
    func theFirstCopyOfATokenIsTheAcceptedOneWhateverTheJobs(jobs: Int) throws {
        let key = try SigningKey(path: CLI.packageRoot.appendingPathComponent("Samples/keys/test-rsa2048.pem").path)
        let issued = TokenTimestamp(millisecondsSince1970: 1_768_478_400_000)!  // 2026-01-15T12:00:00Z
        var tokens: [String] = []
        for index in 0..<300 {
            var request = MintRequest(kind: .media, requestorID: "TNT", resourceID: "TNT", issueTime: issued)
            request.sessionGUID = "session-\(index)"
            request.encoding = .base64
            tokens.append(try TokenMinter.mint(request, key: key))
        }
        #expect(Set(tokens).count == tokens.count, "the first-copy rule needs distinct tokens")
        // Token i appears at position i, then again after 1, 15, 17 and 290 others.
        var lines = tokens
        for (offset, distance) in [1, 15, 17, 290].enumerated() {
            for index in stride(from: offset, to: tokens.count, by: 7) {
                lines.insert(tokens[index], at: min(lines.count, index + distance + offset))
            }
        }
        var firstPosition: [String: Int] = [:]
        for (position, line) in lines.enumerated() where firstPosition[line] == nil { firstPosition[line] = position }
        let file = Self.scratchFile("replays")
        defer { try? FileManager.default.removeItem(at: file) }
        try lines.joined(separator: "\n").write(to: file, atomically: false, encoding: .utf8)
        let result = try CLI.run([
            "verify", "--key", "Samples/keys/trusted", "--now", "2026-01-15T12:03:00Z", "--reject-replays",
            "--jobs", String(jobs), "--format", "jsonl", "@\(file.path)",
        ])
        let objects = try CLI.jsonLines(result.stdout)
        try #require(objects.count == lines.count)
        for (position, object) in objects.enumerated() {
            #expect(object["input"] as? Int == position + 1)
            let expected = firstPosition[lines[position]] == position ? "VALID_TOKEN" : "TOKEN_REPLAYED"
            #expect(object["status"] as? String == expected, "record \(position + 1) at --jobs \(jobs)")
        }
    }
}
