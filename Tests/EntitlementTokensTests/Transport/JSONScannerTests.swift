import Testing

@testable import EntitlementTokens

/// What the scanner tells a handler that asks to keep a string only within a
/// limit (a capture's bodies): kept when short, skipped and said so when long,
/// and the scan goes on either way; a member name has its own bound.
@Suite struct JSONScannerTests {
    /// Records every scalar and every string that ran over its limit.
    struct Recorder: JSONEventHandler {
        var limit: Int
        var events: [String] = []

        mutating func valueStarts(_ kind: JSONValueKind, at position: JSONPosition) throws(TokenError) -> JSONCapture {
            kind == .string ? .keepWithin(limit: limit) : .keep(limit: 64)
        }
        mutating func keyStarts() -> Bool { true }
        mutating func key(_ bytes: [UInt8], at position: JSONPosition) throws(TokenError) {
            events.append("key \(String(decoding: bytes, as: UTF8.self))")
        }
        mutating func scalar(_ kind: JSONScalar, text: [UInt8]) throws(TokenError) {
            events.append("\(kind) \(String(decoding: text, as: UTF8.self))")
        }
        mutating func containerEnds() throws(TokenError) { events.append("end") }
        mutating func stringOverLimit(byteCount: Int) throws(TokenError) { events.append("over \(byteCount)") }
    }

    static func scan(
        _ text: String,
        limit: Int,
        maxStringBytes: Int = 1 << 20,
        maxKeyBytes: Int? = nil,
        chunk: Int
    ) -> (events: [String], error: TokenError?) {
        var scanner = JSONScanner(maxDepth: 8, maxStringBytes: maxStringBytes, maxKeyBytes: maxKeyBytes)
        var recorder = Recorder(limit: limit)
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let end = min(offset + chunk, bytes.count)
            let part = Array(bytes[offset..<end])
            scanner.scan(part.span, with: &recorder)
            offset = end
        }
        let error = scanner.finish(with: &recorder)
        return (recorder.events, error)
    }

    @Test("a string within its limit is kept; a longer one is skipped and said so, and the scan goes on", arguments: [1, 3, 100])
    func keepWithin(chunk: Int) {
        let result = Self.scan("{\"a\":\"short\",\"b\":\"much too long \\u00e9\",\"c\":[1,\"ok\"]}", limit: 8, chunk: chunk)
        #expect(result.error == nil)
        #expect(result.events == ["key a", "string short", "key b", "over 20", "key c", "number 1", "string ok", "end", "end"])
    }

    @Test("a skipped string is still checked to its end by the JSON rules and the scanner's own bound")
    func skippedStringIsStillChecked() {
        #expect(Self.scan("{\"a\":\"long enough \\x\"}", limit: 4, chunk: 5).error?.code == .invalidJSON)
        #expect(
            Self.scan("{\"a\":\"\(String(repeating: "z", count: 50))\"}", limit: 4, maxStringBytes: 20, chunk: 7).error?.code == .jsonLimitExceeded
        )
    }

    @Test("a member name longer than its own bound is refused, whatever values may be")
    func keyBound() {
        let result = Self.scan("{\"\(String(repeating: "k", count: 40))\":1}", limit: 1 << 20, maxKeyBytes: 16, chunk: 64)
        #expect(result.error?.code == .jsonLimitExceeded)
        #expect(result.error?.message.contains("the member name limit") == true)
    }

    /// The plain run of a string is read eight bytes a step: a byte that ends it
    /// must be found at every offset of a word, in every chunking.
    @Test("a quote, an escape, a raw control byte or UTF-8 is seen at every offset of a long run", arguments: [5, 8, 4096])
    func everyOffsetOfARun(chunk: Int) {
        for offset in 0..<20 {
            let before = String(repeating: "a", count: offset)
            let after = String(repeating: "b", count: 19)
            let kept = Self.scan("[\"\(before)\\n\(after)\",\"\(before)é\u{7F}\(after)\",\"\(before)\"]", limit: 1 << 20, chunk: chunk)
            #expect(kept.error == nil)
            #expect(kept.events == ["string \(before)\n\(after)", "string \(before)é\u{7F}\(after)", "string \(before)", "end"])
            for control in [0x00, 0x0A, 0x1F] {
                let text = "[\"\(before)\(Character(Unicode.Scalar(UInt8(control))))\(after)\"]"
                let refused = Self.scan(text, limit: 1 << 20, chunk: chunk).error
                #expect(
                    refused?.code == .invalidJSON && refused?.message.contains("raw control character") == true,
                    "control 0x\(control) at \(offset)"
                )
            }
        }
    }
}
