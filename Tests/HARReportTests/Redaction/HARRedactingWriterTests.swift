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

    @Test("an escape's letters are not text (`\\n` is a newline, `\\u0041` an A), and a match replaces whole escapes")
    func escapes() {
        let input = Array("\"\\nabcdef\" \"\\u0041BCDEFG\" \"q\\/w\\/e\\/r\"".utf8)
        let out = Self.text(Self.redact(input, secrets: ["nabcdef": "cookie", "0041BCDEFG": "cookie", "q/w/e/r": "cookie"], chunk: 1))
        #expect(out.hasPrefix("\"\\nabcdef\" \"\\u0041BCDEFG\" \""))
        #expect(out.hasSuffix("\"\(HARRedaction.marker(kind: "cookie", value: "q/w/e/r"))\""))
    }

    @Test("a secret is found however JSON spells it: `/` and `\\/` mixed in one value, letters as `\\u` escapes, a surrogate pair")
    func spellings() {
        let marker = HARRedaction.marker(kind: "cdn-token", value: "/abc/def://ghi")
        let mixed = Array(#"{"a":"\/abc/def:\/\/ghi","b":"x\/abc\/def:\/\/ghiy"}"#.utf8)
        let spelled = Array(#"{"a":"\u0053ECRET\u00e9\ud83d\ude00VALUE"}"#.utf8)
        let astral = HARRedaction.marker(kind: "cookie", value: "SECRET\u{E9}\u{1F600}VALUE")
        for chunk in [1, 3, 64] {
            #expect(
                Self.text(Self.redact(mixed, secrets: ["/abc/def://ghi": "cdn-token"], chunk: chunk)) == #"{"a":"\#(marker)","b":"x\#(marker)y"}"#
            )
            #expect(Self.text(Self.redact(spelled, secrets: ["SECRET\u{E9}\u{1F600}VALUE": "cookie"], chunk: chunk)) == #"{"a":"\#(astral)"}"#)
        }
    }

    @Test("a secret inside a body that is itself JSON, escaped twice over (`<\\\\/x>` in the file), is replaced")
    func jsonInsideAString() {
        let token = "<signatureInfo>x</signatureInfo>"
        let input = Array(#"{"text":"{\"serializedToken\":\"<signatureInfo>x<\\/signatureInfo>\"}"}"#.utf8)
        let marker = HARRedaction.marker(kind: "media-token", value: token)
        for chunk in [1, 5, 64] {
            #expect(
                Self.text(Self.redact(input, secrets: [token: "media-token"], chunk: chunk)) == #"{"text":"{\"serializedToken\":\"\#(marker)\"}"}"#
            )
        }
    }

    @Test("no match takes JSON's structure: a secret spelled across two strings is not one, and the output stays JSON")
    func structureIsNotText() {
        let input = Array(#"{"a":"xx","yy":"xx\"yy"}"#.utf8)
        let out = Self.text(Self.redact(input, secrets: [#"xx","yy"#: "cookie", #"xx"yy"#: "password"], chunk: 2))
        #expect(out == #"{"a":"xx","yy":"\#(HARRedaction.marker(kind: "password", value: #"xx"yy"#))"}"#)
    }

    @Test(
        "text that is not JSON's (a file changed between the two readings): escapes it does not have are kept as written, no match reaches across them, and a secret after them is still replaced"
    )
    func brokenEscapes() {
        let marker = HARRedaction.marker(kind: "cookie", value: "SECRETVALUE")
        let input = Array(#"{"a":"SECRET\xVALUE \u12g \ud800x \udc00 \ud800\u0041 SECRETVALUE"}"#.utf8)
        for chunk in [1, 4, 64] {
            #expect(
                Self.text(Self.redact(input, secrets: ["SECRETVALUE": "cookie"], chunk: chunk))
                    == #"{"a":"SECRET\xVALUE \u12g \ud800x \udc00 \ud800\u0041 \#(marker)"}"#,
                "chunk \(chunk)"
            )
        }
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
