import EntitlementTokens
import Testing

@testable import HARReport

/// `--redact`: every secret replaced by its marker, everything else byte for
/// byte, whatever the chunking, and the result still a HAR.
@Suite struct HARRedactingWriterTests {
    typealias F = HARFixtures

    static func redact(_ bytes: [UInt8], secrets: [String: String], chunk: Int = 1 << 16) -> [UInt8] {
        var writer = HARRedactingWriter(secrets: secrets)
        var out: [UInt8] = []
        var offset = 0
        while offset < bytes.count {
            let end = min(offset + chunk, bytes.count)
            let part = Array(bytes[offset..<end])
            writer.feed(part.span) { out.append(contentsOf: $0.withUnsafeBufferPointer { Array($0) }) }
            offset = end
        }
        writer.finish { out.append(contentsOf: $0.withUnsafeBufferPointer { Array($0) }) }
        return out
    }

    static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    @Test("a secret is replaced by its marker, the rest kept byte for byte, whatever the chunking")
    func replaces() {
        let input = Array("{\"a\":\"x=SECRETVALUE1;y\",\"b\":\"SECRETVALUE1\",\"c\":\"plain\"}".utf8)
        let marker = HARRedaction.marker(kind: "cookie", value: "SECRETVALUE1")
        let expected = "{\"a\":\"x=\(marker);y\",\"b\":\"\(marker)\",\"c\":\"plain\"}"
        for chunk in [1, 2, 5, 64] {
            #expect(Self.text(Self.redact(input, secrets: ["SECRETVALUE1": "cookie"], chunk: chunk)) == expected, "chunk \(chunk)")
        }
    }

    @Test("a secret inside another is replaced with it, as one marker: the longer's")
    func overlapping() {
        let input = Array("\"abcdefghij\" \"cdef\"".utf8)
        let out = Self.text(Self.redact(input, secrets: ["abcdefghij": "akamai", "cdef": "cookie"], chunk: 3))
        #expect(out == "\"\(HARRedaction.marker(kind: "akamai", value: "abcdefghij"))\" \"\(HARRedaction.marker(kind: "cookie", value: "cdef"))\"")
    }

    @Test("a match never starts inside an escape sequence, so the output stays JSON")
    func escapes() {
        let input = Array("\"\\nabcdef\" \"\\u0041BCDEFG\" \"q\\/w\\/e\\/r\"".utf8)
        let out = Self.text(Self.redact(input, secrets: ["nabcdef": "cookie", "0041BCDEFG": "cookie", "q/w/e/r": "cookie"], chunk: 1))
        #expect(out.hasPrefix("\"\\nabcdef\" \"\\u0041BCDEFG\" \""))
        #expect(out.hasSuffix("\"\(HARRedaction.marker(kind: "cookie", value: "q/w/e/r"))\""))
    }

    @Test("the sample capture redacted: no run of 12 bytes of any secret is left, and it is still a HAR of the same entries")
    func sample() throws {
        let input = try F.sample("har/cookie-expired.har")
        var reader = HARReader()
        var analysis = HARAnalysis(keys: HARKeys(), gathersSecrets: true)
        try reader.feed(input.span) { analysis.add($0) }
        try reader.finish { analysis.add($0) }
        let secrets = try #require(analysis.secrets)
        // The media token, and the two cookies' values (named by the credential they make up).
        #expect(!secrets.overflowed && secrets.values.count == 3)
        #expect(Set(secrets.values.values) == ["media-token", "nginx-secure-link"])
        for chunk in [7, 1 << 16] {
            let output = Self.redact(input, secrets: secrets.values, chunk: chunk)
            for value in secrets.values.keys {
                let bytes = Array(value.utf8)
                guard bytes.count >= 12 else { continue }
                for start in 0...(bytes.count - 12) {
                    let run = bytes[start..<(start + 12)]
                    #expect(!Self.contains(output, run), "a run of \(value.prefix(20))… is left")
                    if Self.contains(output, run) { break }
                }
            }
            let reread = try F.read(output)
            #expect(reread.entries.count == 8)
            #expect(Self.text(output).contains("REDACTED-media-token-"))
        }
    }

    static func contains(_ haystack: [UInt8], _ needle: ArraySlice<UInt8>) -> Bool {
        guard needle.count <= haystack.count else { return false }
        let first = needle.first!
        var index = 0
        while index <= haystack.count - needle.count {
            if haystack[index] == first, haystack[index..<(index + needle.count)].elementsEqual(needle) { return true }
            index += 1
        }
        return false
    }
}
