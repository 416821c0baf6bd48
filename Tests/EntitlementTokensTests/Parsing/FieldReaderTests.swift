import Testing

@testable import EntitlementTokens

/// The field rules on their own (docs/DESIGN.md#parsing-rules): events made here, no libxml2.
@Suite struct FieldReaderTests {
    /// One parse event, as ``LibXML2Driver`` would hand it over.
    enum Event {
        case start(String, prefix: String = "", attributes: [(name: String, value: String)] = [], namespaces: [(prefix: String, uri: String)] = [])
        case text(String)
        case end
    }

    /// Feeds `events` (each at line 1, column = its index + 1) and returns the reader.
    static func read(
        _ events: [Event],
        roots: Set<String> = ["authToken"],
        containers: Bool = false,
        configuration: DecoderConfiguration = .default
    ) -> FieldReader {
        var reader = FieldReader(configuration: configuration)
        reader.reset(allowedRoots: roots, recordingContainers: containers)
        for (index, event) in events.enumerated() {
            let column = index + 1
            switch event {
            case .start(let name, let prefix, let attributes, let namespaces):
                let name = Array(name.utf8)
                let prefix = Array(prefix.utf8)
                guard
                    reader.startElement(
                        localName: name.span,
                        prefix: prefix.span,
                        attributeCount: attributes.count + namespaces.count,
                        line: 1,
                        column: column
                    )
                else { continue }
                for namespace in namespaces {
                    let declared = Array(namespace.prefix.utf8)
                    let uri = Array(namespace.uri.utf8)
                    guard reader.namespaceDeclaration(prefix: declared.span, uri: uri.span) else { break }
                }
                for attribute in attributes {
                    let name = Array(attribute.name.utf8)
                    let value = Array(attribute.value.utf8)
                    let none: [UInt8] = []
                    guard reader.attribute(localName: name.span, prefix: none.span, value: value.span) else { break }
                }
            case .text(let text):
                let bytes = Array(text.utf8)
                reader.text(bytes.span, line: 1, column: column)
            case .end:
                reader.endElement(line: 1, column: column)
            }
        }
        return reader
    }

    static func result(_ reader: borrowing FieldReader) -> Result<ParsedElement, TokenError> {
        let none: [UInt8] = []
        return Result { () throws(TokenError) in try reader.result(in: none.span) }
    }

    static func errorCode(_ events: [Event], configuration: DecoderConfiguration = .default) -> TokenError.Code? {
        if case .failure(let error) = result(read(events, configuration: configuration)) { return error.code }
        return nil
    }

    @Test func leafElementsAndAttributesBecomeFieldsByPath() throws {
        let reader = Self.read([
            .start("authToken", attributes: [("v", "1")]),
            .start("requestorID"), .text("AB"), .text("C"), .end,
            .start("device", namespaces: [("d", "urn:x")]), .start("id", prefix: "d"), .text("7"), .end, .end,
            .text("\n  "),
            .end,
        ])
        let parsed = try Self.result(reader).get()
        #expect(parsed.root == "authToken")
        #expect(parsed.fields.map(\.path) == ["@v", "requestorID", "device/@xmlns:d", "device/d:id"])
        #expect(parsed.fields.map(\.value) == ["1", "ABC", "urn:x", "7"])
        // Each field is located at its element's start event.
        #expect(parsed.fields.map(\.column) == [1, 2, 6, 7])
    }

    @Test func anEmptyElementIsAnEmptyFieldAndContainersAreRecordedOnlyWhenAsked() throws {
        let events: [Event] = [.start("rss"), .start("channel"), .start("title"), .end, .end, .end]
        let plain = try Self.result(Self.read(events, roots: ["rss"])).get()
        #expect(plain.fields == [TokenField(path: "channel/title", value: "", line: 1, column: 3)])
        #expect(plain.containerPaths.isEmpty)
        let recorded = try Self.result(Self.read(events, roots: ["rss"], containers: true)).get()
        #expect(recorded.containerPaths == ["channel"])
    }

    @Test func attributeValuesDecodeLibxml2sEscapedAmpersand() throws {
        let parsed = try Self.result(Self.read([.start("authToken", attributes: [("a", "x&#38;y&#38z")]), .end])).get()
        #expect(parsed.fields.map(\.value) == ["x&y&#38z"])
    }

    @Test func mixedContentIsRefusedWhicheverComesFirst() {
        #expect(Self.errorCode([.start("authToken"), .start("a"), .text("x"), .start("b"), .end, .end, .end]) == .mixedContent)
        #expect(Self.errorCode([.start("authToken"), .start("a"), .start("b"), .end, .text("x"), .end, .end]) == .mixedContent)
        #expect(Self.errorCode([.start("authToken"), .text("x"), .start("a"), .end, .end]) == .mixedContent)
        // White space between children is pretty printing, not content.
        #expect(Self.errorCode([.start("authToken"), .text(" \n"), .start("a"), .end, .text("\t"), .end]) == nil)
    }

    @Test func theRootMustBeAnAllowedNameWrittenWithoutPrefix() {
        #expect(Self.errorCode([.start("html"), .end]) == .unknownTokenRoot)
        #expect(Self.errorCode([.start("authToken", prefix: "x"), .end]) == .unknownTokenRoot)
        // Not a Unicode twin of an allowed root either (K and the Kelvin sign).
        #expect(Self.errorCode([.start("authTo\u{212A}en"), .end]) == .unknownTokenRoot)
        #expect(Self.errorCode([]) == .missingTokenElement)
    }

    @Test func limitsAreEnforcedAtTheEventThatCrossesThem() {
        var configuration = DecoderConfiguration()
        configuration.maxDepth = 2
        #expect(Self.errorCode([.start("authToken"), .start("a"), .text("x"), .end, .end], configuration: configuration) == nil)
        #expect(
            Self.errorCode([.start("authToken"), .start("a"), .start("b"), .end, .end, .end], configuration: configuration) == .depthLimitExceeded
        )

        configuration = DecoderConfiguration()
        configuration.maxElementCount = 3
        let three: [Event] = [.start("authToken"), .start("a"), .end, .start("b"), .end]
        #expect(Self.errorCode(three + [.end], configuration: configuration) == nil)
        #expect(Self.errorCode(three + [.start("c"), .end, .end], configuration: configuration) == .elementCountLimitExceeded)

        configuration = DecoderConfiguration()
        configuration.maxFieldBytes = 4
        #expect(Self.errorCode([.start("authToken"), .start("a"), .text("ab"), .text("cd"), .end, .end], configuration: configuration) == nil)
        #expect(
            Self.errorCode([.start("authToken"), .start("a"), .text("ab"), .text("cde"), .end, .end], configuration: configuration) == .fieldTooLong
        )
        #expect(Self.errorCode([.start("authToken", attributes: [("a", "12345")]), .end], configuration: configuration) == .fieldTooLong)

        configuration = DecoderConfiguration()
        configuration.maxAttributesPerElement = 2
        configuration.maxAttributesPerToken = 3
        let two: [(name: String, value: String)] = [("a", "1"), ("b", "2")]
        #expect(
            Self.errorCode([.start("authToken", attributes: two, namespaces: [("n", "u")]), .end], configuration: configuration)
                == .attributeLimitExceeded
        )
        #expect(
            Self.errorCode([.start("authToken", attributes: two), .start("x", attributes: [("c", "3")]), .end, .end], configuration: configuration)
                == nil
        )
        #expect(
            Self.errorCode([.start("authToken", attributes: two), .start("x", attributes: two), .end, .end], configuration: configuration)
                == .attributeLimitExceeded
        )
    }

    @Test func theFirstFailureWinsAndLaterEventsAreIgnored() {
        var configuration = DecoderConfiguration()
        configuration.maxDepth = 1
        let reader = Self.read([.start("authToken"), .start("a"), .text("x"), .end, .start("b"), .end, .end], configuration: configuration)
        let failed = reader.hasFailed
        let noFields = reader.fields.isEmpty
        #expect(failed)
        #expect(noFields)
        guard case .failure(let error) = Self.result(reader) else {
            Issue.record("no failure")
            return
        }
        #expect(error.code == .depthLimitExceeded)
        #expect(error.location?.line == 1)
    }

    @Test func resetForgetsTheLastDocument() throws {
        var reader = Self.read([.start("authToken"), .start("a"), .text("x")])
        reader.reset(allowedRoots: ["authToken"], recordingContainers: false)
        let forgotten = reader.fields.isEmpty && !reader.hasFailed && reader.root == nil
        #expect(forgotten)
        let name = Array("authToken".utf8)
        let none: [UInt8] = []
        let started = reader.startElement(localName: name.span, prefix: none.span, attributeCount: 0, line: 1, column: 1)
        #expect(started)
        reader.endElement(line: 1, column: 2)
        #expect(try Self.result(reader).get().fields.isEmpty)
    }
}
