import EntitlementTokens
import Testing

@testable import HARReport

/// The streaming reader: the same entries whatever the chunking, the strict
/// JSON rules, and every bound (docs/DESIGN.md#reading-a-capture).
@Suite struct HARReaderTests {
    typealias F = HARFixtures

    static let document = F.har([
        F.entry(url: "https://a.example.test/one?x=1", requestHeaders: [("Cookie", "a=b")], body: "{\"ok\":true}"),
        F.entry(started: "2026-01-15T12:01:02.500Z", method: "POST", url: "https://a.example.test/two", status: 403, postText: "{\"token\":\"t\"}"),
    ])

    static func summary(_ entries: [HAREntry]) -> [String] {
        entries.map {
            "\($0.number) \($0.method) \($0.url) \($0.status) \($0.started?.iso8601 ?? "-") \($0.requestHeaders.count) \($0.content?.text ?? "-") \($0.postData?.text ?? "-")"
        }
    }

    @Test("entries are the same whether the file comes whole, byte by byte, or in odd chunks")
    func chunking() throws {
        let whole = Self.summary(try F.read(Self.document).entries)
        #expect(whole.count == 2)
        #expect(whole[0] == "1 GET https://a.example.test/one?x=1 200 2026-01-15T12:01:00Z 1 {\"ok\":true} -")
        #expect(whole[1] == "2 POST https://a.example.test/two 403 2026-01-15T12:01:02.500Z 0 - {\"token\":\"t\"}")
        for chunk in [1, 2, 3, 7, 64, 1000] {
            #expect(Self.summary(try F.read(Self.document, chunk: chunk).entries) == whole, "chunk \(chunk)")
        }
    }

    @Test(
        "what is not a HAR is a typed error naming why",
        arguments: [
            ("[]", "not a HAR: the document is not a JSON object"),
            ("{\"x\":1}", "not a HAR: the JSON object has no 'log' member"),
            ("{\"log\":[]}", "not a HAR: 'log' is not an object"),
            ("{\"log\":{\"version\":\"1.2\"}}", "the HAR's log has no entries array"),
            ("{\"log\":{\"entries\":{}}}", "not a HAR: 'log.entries' is not an array"),
            ("{\"log\":{\"entries\":[]},\"log\":{\"entries\":[]}}", "the member 'log' appears twice in one object"),
            ("{\"log\":{\"entries\":[{\"request\":{},\"request\":{}}]}}", "the member 'request' appears twice in one object"),
            ("{\"log\":{\"entries\":[]}", "the JSON document ends before it is complete"),
            ("{\"log\":{\"entries\":[]}} x", "content after the end of the JSON document"),
            ("{\"log\":{\"entries\":[01]}}", "a number with a leading zero"),
            ("", "the JSON document is empty"),
        ]
    )
    func refusals(text: String, message: String) {
        do {
            _ = try F.read(Array(text.utf8))
            Issue.record("read \(text)")
        } catch let error as HARReadError {
            #expect(error.message.contains(message), "\(error.message)")
        } catch {
            Issue.record("\(error)")
        }
    }

    @Test("nesting deeper than the limit is refused, not followed")
    func depth() {
        let deep = String(repeating: "[", count: 40) + String(repeating: "]", count: 40)
        #expect(throws: HARReadError.self) { try F.read(F.har([F.entry(url: "https://a.test/", extra: ",\"_x\":\(deep)")])) }
    }

    @Test("a body over the limit is skipped and said so; the rest of the capture is read")
    func bodyOverLimit() throws {
        var limits = HARLimits()
        limits.maxBodyBytes = 100
        let big = String(repeating: "A", count: 5000)
        let read = try F.read(F.har([F.entry(url: "https://a.test/seg.ts", body: big), F.entry(url: "https://a.test/next")]), limits: limits)
        #expect(read.entries.count == 2)
        #expect(read.entries[0].content?.text == nil)
        #expect(read.entries[0].skipped == ["a body of 5000 bytes was skipped (over the limit of 100)"])
        #expect(read.entries[1].url == "https://a.test/next")
    }

    @Test("a field over its limit is skipped and said so")
    func fieldOverLimit() throws {
        var limits = HARLimits()
        limits.maxFieldBytes = 50
        let read = try F.read(F.har([F.entry(url: "https://a.test/" + String(repeating: "p", count: 200))]), limits: limits)
        #expect(read.entries[0].url == "")
        #expect(read.entries[0].skipped == ["the value of 'url' of 215 bytes was skipped (over the limit of 50)"])
    }

    @Test("an entry of too many values keeps what came first and says the rest was not read")
    func valuesPerEntry() throws {
        var limits = HARLimits()
        limits.maxValuesPerEntry = 30
        let headers = (0..<100).map { ("h\($0)", "v") }
        let read = try F.read(F.har([F.entry(url: "https://a.test/x", requestHeaders: headers), F.entry(url: "https://a.test/y")]), limits: limits)
        #expect(read.entries.count == 2)
        #expect(read.entries[0].url == "https://a.test/x")
        #expect(read.entries[0].skipped.first?.contains("more than 30 values") == true)
        #expect(read.entries[1].skipped.isEmpty)
    }

    @Test("entries over the limit are counted and said so, not read")
    func entryLimit() throws {
        var limits = HARLimits()
        limits.maxEntries = 2
        let read = try F.read(F.har((0..<5).map { F.entry(url: "https://a.test/\($0)") }), limits: limits)
        #expect(read.entries.map(\.url) == ["https://a.test/0", "https://a.test/1"])
        #expect(read.notes == ["entries after #2 were not read (the limit of entries)"])
    }

    @Test("a Base64 text body is decoded; a binary one is neither decoded nor kept")
    func base64Bodies() throws {
        let text = Base64.encode(Array("{\"serializedToken\":\"x\"}".utf8))
        let read = try F.read(
            F.har([
                F.entry(url: "https://a.test/a", body: text, bodyEncoding: "base64"),
                F.entry(url: "https://a.test/b.ts", body: Base64.encode([0, 1, 2, 0xFF]), bodyEncoding: "base64", mimeType: "video/mp2t"),
                F.entry(url: "https://a.test/c", body: "!!!", bodyEncoding: "base64"),
                F.entry(url: "https://a.test/d.ts", body: "!!!", bodyEncoding: "base64", mimeType: "video/mp2t"),
            ])
        )
        #expect(read.entries[0].content?.text == "{\"serializedToken\":\"x\"}")
        #expect(read.entries[1].content?.text == nil)
        #expect(read.entries[2].content?.text == nil && read.entries[2].skipped == ["a Base64 body that is not Base64 was not read"])
        // Never decoded, so never said to be broken: a segment is not read for credentials.
        #expect(read.entries[3].content?.text == nil && read.entries[3].skipped.isEmpty)
    }

    @Test("missing optional fields are tolerated; a failed request keeps status 0 and its error")
    func lenient() throws {
        let read = try F.read(
            Array(
                "{\"log\":{\"entries\":[{},{\"request\":{\"url\":\"https://a.test/\"},\"response\":{\"status\":0,\"_error\":\"net::ERR_FAILED\"}},7]}}"
                    .utf8
            )
        )
        #expect(read.entries.count == 2)
        #expect(read.entries[0].url == "" && read.entries[0].started == nil && read.entries[0].status == 0)
        #expect(read.entries[1].error == "net::ERR_FAILED")
        #expect(read.notes == ["entry #3 is not an object and was not read"])
    }

    @Test("a HAR is recognised by its start")
    func recognised() {
        #expect(HARReader.looksLikeHAR(Array("  {\n  \"log\": {".utf8)))
        #expect(HARReader.looksLikeHAR(Array("\u{FEFF}{\"log\":{}}".utf8)))
        #expect(!HARReader.looksLikeHAR(Array("{\"serializedToken\":\"x\"}".utf8)))
        #expect(!HARReader.looksLikeHAR(Array("<signatureInfo>".utf8)))
        #expect(!HARReader.looksLikeHAR(Array("{".utf8)))
    }
}
