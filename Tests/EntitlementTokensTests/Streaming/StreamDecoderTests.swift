import Testing
import TokenTestSupport

@testable import EntitlementTokens

/// Many tokens in one input (docs/DESIGN.md#records-in-a-multi-token-input), fed in chunks.
@Suite struct StreamDecoderTests {
    static let media = Fixtures.legacy(Fixtures.mediaElement())
    /// Pretty-printed, legacy form.
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
    static let mixedStream: String =
        [
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
        (14, .invalidBase64), (15, nil), (16, nil),
        // Line 18 leaves the token element open, so line 19 is its content: the
        // nested `<signatureInfo>` fails the record, which ends with that line.
        (18, .duplicateSignatureBlock),
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
        let inputs = [
            Self.mixedStream, Self.prettyPrinted, Self.media, "\n\n" + Self.media + "\n" + Self.media,
            #"{"decisions":[{"token":{"serializedToken":"\#(Fixtures.base64(Self.media))"}},{"resource":"x"}]}"#,
        ]
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
        let whole = try parser.parse(element.span, allowedRoots: EntitlementToken.roots)
        for chunk in [1, 2, 3, 7, 64] {
            let split = try parser.parse(element.span, allowedRoots: EntitlementToken.roots, chunkSize: chunk)
            #expect(split.fields.map(\.value) == whole.fields.map(\.value), "chunk \(chunk)")
            #expect(split.fields.map(\.path) == whole.fields.map(\.path))
        }
    }

    @Test func aBadRecordNeverStopsTheStream() {
        let input = [Self.media, "%%%", Fixtures.base64("<x/>"), "<<<", Self.media].joined(separator: "\n")
        let records = StreamHelpers.decodeAll(input)
        #expect(records.map { $0.errorCode == nil } == [true, false, false, false, true])
    }

    @Test func aSignatureInfoLineInsideAnOpenElementIsContentAndAFailedRecordEndsWithItsLine() {
        let input = "<signatureInfo>AAAA<signatureInfo><authToken>\n<requestorID>x\n" + Self.media + "\n" + Self.media
        let records = StreamHelpers.decodeEveryWay(input)
        #expect(records.map(\.errorCode) == [.duplicateSignatureBlock, nil])
        #expect(records.map(\.record.line) == [1, 4])
    }

    @Test func oversizedRecordsAreReportedAndSkipped() {
        var configuration = DecoderConfiguration()
        configuration.maxTokenBytes = 2048
        let huge = String(repeating: "A", count: configuration.maxRecordBytes + 10)
        let raw = "<signatureInfo>AAAA<signatureInfo><authToken>\n" + String(repeating: "<x>1</x>\n", count: 400)
        let input = [huge, Self.media, raw, Self.media].joined(separator: "\n")
        let records = StreamHelpers.decodeAll(input, configuration: configuration)
        #expect(records.prefix(3).map(\.errorCode) == [.inputTooLarge, nil, .tokenTooLarge])
        // A record that outgrew the limit has failed and ends with its line; the
        // rest of it is read as records of its own, and the token after it is intact.
        #expect(records.last?.errorCode == nil)
        #expect(records.last?.record.line == 405)
        #expect(records.dropFirst(3).dropLast().allSatisfy { $0.errorCode != nil })
        let json = "{" + String(repeating: " ", count: 100) + "}"
        configuration.maxJSONDocumentBytes = 50
        #expect(StreamHelpers.decodeAll(json, configuration: configuration).map(\.errorCode) == [.inputTooLarge])
    }

    @Test func aSignatureInfoLineInsideAnOpenSignatureBlockEndsIt() {
        // The legacy terminator on a line of its own: the block is open, so the line goes on the record.
        let input = "<signatureInfo>\n\(Fixtures.signature)\n<signatureInfo>\n\(Fixtures.mediaElement())"
        #expect(StreamHelpers.decodeEveryWay(input).map(\.errorCode) == [nil])
        let closed = "<signatureInfo>\n\(Fixtures.signature)\n</signatureInfo>\n\(Fixtures.mediaElement())"
        #expect(StreamHelpers.decodeEveryWay(closed).map(\.errorCode) == [nil])
    }

    /// docs/DESIGN.md#records-in-a-multi-token-input: one bad raw line never takes the records after it with it.
    @Test(arguments: [
        "<",
        "<<<",
        "<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1><hr><center>nginx</center></body></html>",
        "<!DOCTYPE html>",
        "<html><body>Service Unavailable</body></html>",
        "<?xml version=\"1.0\"?>",
        "<br/>",
        "<signatureInfo>AAAA<signatureInfo>",
        "<a href='x'",
        "<html>",
        "<p>Error <b>500",
    ])
    func aBadRawLineBeforeTwoHundredEncodedTokensGivesTwoHundredAndOneVerdicts(badLine: String) {
        let line = Fixtures.base64(Self.media)
        let input = ([badLine] + Array(repeating: line, count: 200)).joined(separator: "\n") + "\n"
        let records = StreamHelpers.decodeEveryWay(input, randomSplits: 3)
        #expect(records.count == 201)
        #expect(records.first?.errorCode != nil)
        #expect(records.dropFirst().allSatisfy { $0.errorCode == nil })
        #expect(records.map(\.record.line) == Array(1...201))
    }

    @Test func aLineStartingWithAnXMLDeclarationInsideCDATAIsContent() throws {
        let resource =
            "<![CDATA[\n<?xml version=\"1.0\"?>\n<signatureInfo>not a block</signatureInfo>\n<rss version=\"2.0\"><channel><title>TNT</title></channel></rss>\n]]>"
        let input = """
            <?xml version="1.0" encoding="UTF-8"?>
            <signatureInfo>\(Fixtures.signature)</signatureInfo>
            <authToken>
              <requestorID>TNT</requestorID>
              <resourceID>\(resource)</resourceID>
              <ttl>420000</ttl>
              <issueTime>2016-03-17 15:01:31 -0700</issueTime>
            </authToken>
            \(Self.media)
            """
        let records = StreamHelpers.decodeEveryWay(input)
        #expect(records.map(\.errorCode) == [nil, nil])
        #expect(records.map(\.record.line) == [1, 13])
        let token = try #require(try? records[0].result.get())
        #expect(token.token.resourceID?.hasPrefix("\n<?xml version") == true)
        #expect(token.token.resourceID?.contains("\n<signatureInfo>not a block") == true)
    }

    @Test func aRecordLackingAPartGoesOnOnlyIntoALineStartingWithLessThan() {
        // The closed signature block first, the token element on the next line: one record.
        let split = "<signatureInfo>\(Fixtures.signature)</signatureInfo>\n  \(Fixtures.mediaElement())"
        #expect(StreamHelpers.decodeEveryWay(split).map(\.errorCode) == [nil])
        // A signature block and then an encoded token: two records, the first incomplete.
        let orphan = "<signatureInfo>\(Fixtures.signature)</signatureInfo>\n" + Fixtures.base64(Self.media)
        #expect(StreamHelpers.decodeEveryWay(orphan).map(\.errorCode) == [.missingTokenElement, nil])
        // A new `<?xml` or `<signatureInfo` line while nothing is open starts a new record.
        let restart = "<signatureInfo>\(Fixtures.signature)</signatureInfo>\n" + Self.media
        #expect(StreamHelpers.decodeEveryWay(restart).map(\.errorCode) == [.missingTokenElement, nil])
    }

    @Test func aByteOrderMarkAtTheStartIsSkippedBeforeEveryRecordKind() throws {
        let bom = "\u{FEFF}"
        let kinds = [
            Self.media,
            Self.prettyPrinted,
            Fixtures.base64(Self.media),
            Fixtures.base64url(Self.media),
            Fixtures.percentEncoded(Fixtures.base64(Self.media)),
            "token=" + Fixtures.percentEncoded(Self.media),
            "\n  \n" + Fixtures.base64(Self.media),
            #"{"serializedToken": "\#(Fixtures.base64(Self.media))"}"#,
            #"  {"decisions": [{"token": {"serializedToken": "\#(Fixtures.base64(Self.media))"}}]}"#,
        ]
        for kind in kinds {
            let records = StreamHelpers.decodeEveryWay(bom + kind + "\n" + Fixtures.base64(Self.media), randomSplits: 5)
            let expectedCount = kind.hasPrefix("{") || kind.hasPrefix("  {") ? 1 : 2
            if expectedCount == 1 {
                // A JSON document is the whole input: the line after it is trailing content.
                #expect(records.map(\.errorCode) == [.invalidJSON], "\(kind.prefix(30))")
                let alone = StreamHelpers.decodeEveryWay(bom + kind, randomSplits: 5)
                #expect(alone.map(\.errorCode) == [nil], "\(kind.prefix(30))")
                // The record starts at the document, or at its decision (REST v2).
                let start = kind.contains("decisions") ? Array(kind.utf8).firstIndex(of: UInt8(ascii: "["))! + 1 : kind.prefix { $0 == " " }.count
                #expect(alone.first?.record.byteOffset == 3 + start)
            } else {
                #expect(records.map(\.errorCode) == [nil, nil], "\(kind.prefix(30))")
                // Offsets count the mark: it is in the input.
                #expect(records.first?.record.byteOffset == 3 + (kind.hasPrefix("\n") ? 4 : 0))
            }
        }
        // A mark later on is part of its line; a Base64 token after a mark is one
        // of the pasted forms (docs/DESIGN.md#what-people-paste), unwrapped with a warning.
        let later = Fixtures.base64(Self.media) + "\n" + bom + Fixtures.base64(Self.media)
        let laterRecords = StreamHelpers.decodeEveryWay(later)
        #expect(laterRecords.map(\.errorCode) == [nil, nil])
        #expect(laterRecords.last.flatMap { try? $0.result.get().warnings.isEmpty } == false)
        // The first bytes of a mark and then something else are input.
        #expect(
            StreamHelpers.decodeEveryWay([0xEF, 0xBB, 0x41, 0x0A] + Array(Fixtures.base64(Self.media).utf8)).map(\.errorCode)
                == [.invalidBase64, nil]
        )
        #expect(StreamHelpers.decodeEveryWay([0xEF]).map(\.errorCode) == [.invalidBase64])
        #expect(StreamHelpers.decodeEveryWay([0xEF, 0xBB, 0xBF]).isEmpty)
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
