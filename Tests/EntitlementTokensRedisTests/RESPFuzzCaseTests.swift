import Foundation
import RedisRESP
import Testing

/// Replays Fuzz/Seeds/FuzzRESP and Fuzz/FailCases/FuzzRESP in-process with
/// FuzzRESP's input layout and its two main checks (chunk invariance,
/// canonical re-encoding), so a finding stays a unit test once filed.
@Suite("RESP: fuzz seeds and findings")
struct RESPFuzzCaseTests {
    static let fuzzDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz")

    static var cases: [String] {
        ["Seeds/FuzzRESP", "FailCases/FuzzRESP"].flatMap { folder -> [String] in
            let directory = fuzzDirectory.appendingPathComponent(folder)
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
            return names.filter { !$0.hasSuffix(".md") }.sorted().map { "\(folder)/\($0)" }
        }
    }

    static let tight = RESPLimits(maxLineBytes: 24, maxBulkBytes: 16, maxArrayCount: 4, maxNestingDepth: 3, maxReplyBytes: 96)

    @Test("there are seeds to replay")
    func seedsExist() {
        #expect(Self.cases.count >= 10)
    }

    @Test("each case decodes the same whole, cut and byte by byte, and re-encodes to itself", arguments: cases)
    func replay(path: String) throws {
        let input = Array(try Data(contentsOf: Self.fuzzDirectory.appendingPathComponent(path)))
        let header = try #require(input.first)
        let cutCount = Int(header & 0x1F)
        let limits = header & 0x40 != 0 ? Self.tight : .default
        try #require(input.count >= 1 + 2 * cutCount)
        let stream = Array(input[(1 + 2 * cutCount)...])
        var cuts = (0..<cutCount).map { index in
            (Int(input[2 + 2 * index]) << 8 | Int(input[1 + 2 * index])) % (stream.count + 1)
        }
        cuts.sort()
        let whole = decodeAll([stream], limits: limits)
        var chunks: [[UInt8]] = []
        var start = 0
        for cut in cuts {
            chunks.append(Array(stream[start..<cut]))
            start = cut
        }
        chunks.append(Array(stream[start...]))
        let chunked = decodeAll(chunks, limits: limits)
        #expect(chunked.replies == whole.replies)
        #expect(chunked.error == whole.error)
        let single = decodeAll(stream.map { [$0] }, limits: limits)
        #expect(single.replies == whole.replies)
        #expect(single.error == whole.error)
        let reread = decodeAll([whole.replies.flatMap { $0.encoded() }], limits: limits)
        #expect(reread.replies == whole.replies)
        #expect(reread.error == nil)
    }
}
