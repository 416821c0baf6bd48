import Testing
@testable import EntitlementTokens

/// Many tokens in one input (SPEC §2 "Records in a multi-token input"), fed in chunks.
@Suite struct StreamDecoderTests {
    static let media = Fixtures.legacy(Fixtures.mediaElement())
    /// Pretty-printed, legacy form: the terminating `<signatureInfo>` stays on the
    /// first line, since a line beginning `<signatureInfo` always starts a record.
    static let prettyPrinted = """
        <signatureInfo>\(Fixtures.signature)<signatureInfo>
        <authToken>
          <requestorID>MSNBC</requestorID>
          <resourceID>\(Fixtures.rssResourceInCDATA)</resourceID>
          <ttl>420000</ttl>
          <issueTime>2016-03-17 15:01:31 -0700</issueTime>
        </authToken>
        """

    /// Every kind and form, plus broken records between good ones.
    static let mixedStream: String = [
        media,
        "",
        prettyPrinted,
        Fixtures.base64(Fixtures.legacy(Fixtures.authenticationElement())),
        "   ",
        Fixtures.base64url(Fixtures.closed(Fixtures.authorizationElement(), after: true)),
        Fixtures.percentEncoded(Fixtures.base64(media)),
        "not a token at all!",
        Fixtures.closed(Fixtures.mediaElement(), after: true),
        "<?xml version=\"1.0\"?>",
        media,
        "<signatureInfo>AAAA<signatureInfo><authToken><requestorID>cut off",
        media + " trailing",
        #"{"serializedToken": "\#(Fixtures.base64(media))", "expires": "1458252511000"}"#,
        "<authToken>",
        "  <requestorID>A</requestorID><resourceID>B</resourceID><ttl>1</ttl><issueTime>1970-01-01T00:00:00Z</issueTime>",
        "</authToken><signatureInfo>\(Fixtures.signature)</signatureInfo>",
        media + "\r",
    ].joined(separator: "\n") + "\n"

    static let expected: [(Int, TokenError.Code?)] = [
        (1, nil), (3, nil), (10, nil), (12, nil), (13, nil),
        (14, .invalidBase64), (15, nil), (16, nil), (18, .unterminatedTokenElement), (19, .unexpectedTopLevelContent),
        (20, nil), (21, nil), (24, nil),
    ]

    @Test func recordsAreSplitAsTheSpecSays() {
        let records = StreamHelpers.decodeAll(Self.mixedStream)
        #expect(records.map(\.index) == Array(1...Self.expected.count))
        #expect(records.map(\.record.line) == Self.expected.map(\.0))
        #expect(records.map(\.errorCode) == Self.expected.map(\.1))
        // The declaration line started a record that went on into the token's line.
        #expect(records[7].record.line == 16)
        #expect(records[7].errorCode == nil)
        // The pretty-printed record kept its line breaks in the signed bytes.
        let pretty = try? records[1].result.get()
        #expect(pretty?.signedBytes.contains(UInt8(ascii: "\n")) == true)
        #expect(pretty?.mediaRSS?.itemGUID == "2847811")
        // A CRLF line's \r is not part of the token.
        #expect((try? records.last?.result.get())??.token.requestorID == "MSNBC")
    }

    @Test func chunkSplitInvariance() {
        var generator = SeededGenerator(seed: 0x70CE)
        let inputs = [Self.mixedStream, Self.prettyPrinted, Self.media, "\n\n" + Self.media + "\n" + Self.media,
                      #"{"decisions":[{"token":{"serializedToken":"\#(Fixtures.base64(Self.media))"}},{"resource":"x"}]}"#]
        for input in inputs {
            let bytes = Array(input.utf8)
            let whole = StreamHelpers.decode(bytes, splits: []).map(StreamHelpers.summary)
            #expect(!whole.isEmpty)
            let byteByByte = StreamHelpers.decode(bytes, splits: Array(0..<bytes.count)).map(StreamHelpers.summary)
            #expect(byteByByte == whole)
            for _ in 0..<20 {
                let count = Int.random(in: 1...12, using: &generator)
                let splits = (0..<count).map { _ in Int.random(in: 0...bytes.count, using: &generator) }.sorted()
                #expect(StreamHelpers.decode(bytes, splits: splits).map(StreamHelpers.summary) == whole, "splits \(splits)")
            }
        }
    }

    @Test func libxmlFedInSmallChunksGivesTheSameTokens() throws {
        let parser = XMLPushParser(configuration: .default)
        let element = Array(Fixtures.mediaElement(resourceXML: Fixtures.rssResourceInCDATA, extra: "<a b=\"&amp;\">&#x263A;</a>").utf8)
        let whole = try element.withUnsafeBufferPointer { try parser.parse($0, allowedRoots: EntitlementToken.roots) }
        for chunk in [1, 2, 3, 7, 64] {
            let split = try element.withUnsafeBufferPointer { try parser.parse($0, allowedRoots: EntitlementToken.roots, chunkSize: chunk) }
            #expect(split.fields.map(\.value) == whole.fields.map(\.value), "chunk \(chunk)")
            #expect(split.fields.map(\.path) == whole.fields.map(\.path))
        }
    }

    @Test func aBadRecordNeverStopsTheStream() {
        let input = [Self.media, "%%%", Fixtures.base64("<x/>"), "<<<", Self.media].joined(separator: "\n")
        let records = StreamHelpers.decodeAll(input)
        #expect(records.map { $0.errorCode == nil } == [true, false, false, false, true])
    }

    @Test func anUnfinishedRawRecordEndsAtTheNextSignatureInfoLine() {
        let input = "<signatureInfo>AAAA<signatureInfo><authToken>\n<requestorID>x\n" + Self.media
        let records = StreamHelpers.decodeAll(input)
        #expect(records.map(\.errorCode) == [.unterminatedTokenElement, nil])
        #expect(records.map(\.record.line) == [1, 3])
    }

    @Test func oversizedRecordsAreReportedAndSkipped() {
        var configuration = DecoderConfiguration()
        configuration.maxTokenBytes = 2048
        let huge = String(repeating: "A", count: configuration.maxRecordBytes + 10)
        let raw = "<signatureInfo>AAAA<signatureInfo><authToken>\n" + String(repeating: "<x>1</x>\n", count: 400)
        let input = [huge, Self.media, raw, Self.media].joined(separator: "\n")
        let records = StreamHelpers.decodeAll(input, configuration: configuration)
        #expect(records.map(\.errorCode) == [.inputTooLarge, nil, .tokenTooLarge, nil])
        let json = "{" + String(repeating: " ", count: 100) + "}"
        configuration.maxJSONDocumentBytes = 50
        #expect(StreamHelpers.decodeAll(json, configuration: configuration).map(\.errorCode) == [.inputTooLarge])
    }

    @Test func aLineBeginningWithSignatureInfoAlwaysStartsARecord() {
        // So the legacy terminator must not stand at the start of its own line.
        let input = "<signatureInfo>\n\(Fixtures.signature)\n<signatureInfo>\n\(Fixtures.mediaElement())"
        let records = StreamHelpers.decodeAll(input)
        #expect(records.map(\.errorCode) == [.unterminatedSignatureBlock, .unterminatedSignatureBlock])
        // The closed form pretty-prints fine.
        let closed = "<signatureInfo>\n\(Fixtures.signature)\n</signatureInfo>\n\(Fixtures.mediaElement())"
        #expect(StreamHelpers.decodeAll(closed).map(\.errorCode) == [nil])
    }

    @Test func emptyAndBlankInputsHaveNoRecords() {
        #expect(StreamHelpers.decodeAll("").isEmpty)
        #expect(StreamHelpers.decodeAll("\n \r\n\t\n").isEmpty)
    }

    /// 100,000 tokens through the stream decoder: what it keeps between
    /// calls stays bounded by one record, however long the stream.
    @Test func hundredThousandTokensWithFlatMemory() {
        let decoder = TokenStreamDecoder()
        let line = Array((Fixtures.base64(Self.media) + "\n").utf8)
        var chunk: [UInt8] = []
        for _ in 0..<64 { chunk += line }
        var decoded = 0
        var failures = 0
        var maxRetained = 0
        var maxPerFeed = 0
        var fed = 0
        while fed < 100_000 {
            let count = min(64, 100_000 - fed)
            let records = decoder.feed(count == 64 ? chunk[...] : chunk[0..<(count * line.count)])
            fed += count
            decoded += records.count
            failures += records.filter { $0.errorCode != nil }.count
            maxPerFeed = max(maxPerFeed, records.count)
            maxRetained = max(maxRetained, decoder.retainedBytes)
        }
        decoded += decoder.finish().count
        #expect(decoded == 100_000)
        #expect(failures == 0)
        // Records come out as their lines complete, never piled up.
        #expect(maxPerFeed == 64)
        // One partial line at most: a few KiB, not a function of the stream's length.
        #expect(maxRetained < 8 * 1024, "retained \(maxRetained) bytes")
    }
}

/// A small deterministic generator so split points are reproducible.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
