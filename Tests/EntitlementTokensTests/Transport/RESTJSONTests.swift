import Foundation
import Testing

@testable import EntitlementTokens

/// The REST JSON form (docs/DESIGN.md#transport-forms): the streaming scanner, its
/// limits, and the envelope read from it.
@Suite struct RESTJSONTests {
    static let media = Fixtures.legacy(Fixtures.mediaElement())
    static let token = Fixtures.base64(media)

    /// The records of `json`, checked to be the same fed whole, byte by byte and cut at random.
    static func records(
        _ json: String,
        configuration: DecoderConfiguration = .default,
        randomSplits: Int = 5,
        sourceLocation: Testing.SourceLocation = #_sourceLocation
    ) -> [DecodedRecord] {
        StreamHelpers.decodeEveryWay(json, configuration: configuration, randomSplits: randomSplits, sourceLocation: sourceLocation)
    }

    static func error(_ json: String, configuration: DecoderConfiguration = .default) -> TokenError? {
        let records = StreamHelpers.decodeAll(json, configuration: configuration)
        guard records.count == 1, case .failure(let error) = records[0].result else { return nil }
        return error
    }

    // MARK: - What RFC 8259 allows is read

    @Test(arguments: [
        #"{"serializedToken":"TOKEN"}"#,
        " \t\r\n{ \"serializedToken\" \t:\r\n\"TOKEN\" \n} \n\n",
        #"{"a":0,"b":-0,"c":1.5,"d":-12.25e+3,"e":1E-7,"f":10e0,"g":123456789012345678901234567890,"serializedToken":"TOKEN"}"#,
        #"{"a":true,"b":false,"c":null,"d":[],"e":{},"f":[1,[2,[3,{"g":[]}]]],"serializedToken":"TOKEN"}"#,
        #"{"a":"\"\\\/\b\f\n\r\t\u0000\u00e9\uD83D\uDE00\u20AC","serializedToken":"TOKEN"}"#,
        #"{"é":"😀 € é","":"","serializedToken":"TOKEN"}"#,
        #"{"serializ\u0065dToken":"TOKEN"}"#,
        #"{"x":[{"serializedToken":"not read: not in the envelope"}],"serializedToken":"TOKEN"}"#,
    ])
    func validDocumentsGiveTheirToken(template: String) throws {
        let records = Self.records(template.replacingOccurrences(of: "TOKEN", with: Self.token))
        try #require(records.count == 1)
        #expect(try records[0].result.get().token.requestorID == "MSNBC")
        #expect(records[0].record.envelope?.version == .restV1)
    }

    @Test func escapesInATokenAreUndone() throws {
        // `\/` is how some JSON writers put `/` in Base64; `\u0041` is an A.
        let escaped = Self.token.replacingOccurrences(of: "/", with: #"\/"#).replacingOccurrences(of: "A", with: #"\u0041"#)
        #expect(escaped != Self.token)
        let records = Self.records(#"{"serializedToken":"\#(escaped)"}"#)
        #expect(try records.first?.result.get().token.requestorID == "MSNBC")
    }

    @Test func envelopeValuesKeepTheirJSONTypes() throws {
        let json =
            #"{"expires":"1458252511000","ttl":420000,"ratio":-1.50e+2,"ok":true,"no":false,"gone":null,"nested":{"x":1},"list":[1],"text":"a\u00e9\n","serializedToken":"\#(Self.token)"}"#
        let envelope = try #require(Self.records(json).first?.record.envelope)
        #expect(envelope.fields.map(\.key) == ["expires", "gone", "no", "ok", "ratio", "text", "ttl"])
        #expect(envelope["expires"] == .string("1458252511000"))
        #expect(envelope["ttl"] == .number("420000"))
        // As written: no conversion through a Double.
        #expect(envelope["ratio"] == .number("-1.50e+2"))
        #expect(envelope["ok"] == .bool(true))
        #expect(envelope["no"] == .bool(false))
        #expect(envelope["gone"] == .null)
        #expect(envelope["text"] == .string("aé\n"))
        #expect(envelope["nested"] == nil && envelope["list"] == nil)
    }

    // MARK: - What it does not allow is refused, with where

    @Test(arguments: [
        #"{"serializedToken":"T",}"#,
        #"{"a":[1,2,],"serializedToken":"T"}"#,
        #"{"a":[,1],"serializedToken":"T"}"#,
        #"{"a":1 /* comment */,"serializedToken":"T"}"#,
        "{\"a\":1, // comment\n\"serializedToken\":\"T\"}",
        #"{"a":01,"serializedToken":"T"}"#,
        #"{"a":-01,"serializedToken":"T"}"#,
        #"{"a":+1,"serializedToken":"T"}"#,
        #"{"a":.5,"serializedToken":"T"}"#,
        #"{"a":1.,"serializedToken":"T"}"#,
        #"{"a":1e,"serializedToken":"T"}"#,
        #"{"a":1e+,"serializedToken":"T"}"#,
        #"{"a":-,"serializedToken":"T"}"#,
        #"{"a":0x10,"serializedToken":"T"}"#,
        #"{"a":NaN,"serializedToken":"T"}"#,
        #"{"a":Infinity,"serializedToken":"T"}"#,
        #"{"a":tru,"serializedToken":"T"}"#,
        #"{"a":nul,"serializedToken":"T"}"#,
        #"{"a":True,"serializedToken":"T"}"#,
        #"{'a':1,"serializedToken":"T"}"#,
        #"{a:1,"serializedToken":"T"}"#,
        #"{"a" 1,"serializedToken":"T"}"#,
        #"{"a":1 "serializedToken":"T"}"#,
        #"{"a":"\x41","serializedToken":"T"}"#,
        #"{"a":"\u12","serializedToken":"T"}"#,
        #"{"a":"\uD800","serializedToken":"T"}"#,
        #"{"a":"\uDC00\uD800","serializedToken":"T"}"#,
        #"{"a":"\uD800\u0041","serializedToken":"T"}"#,
        #"{"a":"\uD800x","serializedToken":"T"}"#,
        "{\"a\":\"tab\there\",\"serializedToken\":\"T\"}",
        "{\"a\":\"line\nbreak\",\"serializedToken\":\"T\"}",
        #"{"serializedToken":"T"}}"#,
        #"{"serializedToken":"T"} {}"#,
        #"{"serializedToken":"T"} x"#,
        #"{"serializedToken":"T""#,
        #"{"serializedToken":"T"#,
        #"{"serializedToken":"#,
        #"{"#,
        #"{"a":[1,2"#,
        #"{"a":1}]"#,
        #"{"a":}"#,
        #"{,}"#,
    ])
    func malformedJSONIsRefused(json: String) throws {
        let records = Self.records(json, randomSplits: 3)
        try #require(records.count == 1)
        #expect(records[0].errorCode == .invalidJSON)
        if case .failure(let error) = records[0].result {
            let location = try #require(error.location)
            #expect(location.byteOffset <= json.utf8.count)
            #expect(error.stage == .transport)
        }
    }

    @Test(
        arguments: [
            [0xC0, 0x80],  // overlong
            [0xE0, 0x80, 0x80],  // overlong
            [0xED, 0xA0, 0x80],  // a surrogate
            [0xF4, 0x90, 0x80, 0x80],  // past U+10FFFF
            [0xF5, 0x80, 0x80, 0x80],
            [0x80],  // a lone continuation byte
            [0xC3],  // cut short by the quote
            [0xE2, 0x82],
            [0xFF],
        ] as [[UInt8]]
    )
    func invalidUTF8InAStringIsRefused(bytes: [UInt8]) {
        let document = Array(#"{"a":""#.utf8) + bytes + Array(#"","serializedToken":"T"}"#.utf8)
        let records = StreamHelpers.decodeEveryWay(document, randomSplits: 3)
        #expect(records.map(\.errorCode) == [.invalidJSON])
    }

    @Test func aSyntaxErrorSaysWhereItIs() throws {
        let json = "{\n  \"serializedToken\": \"\(Self.token)\",\n  \"expires\": 01\n}"
        let error = try #require(Self.error(json))
        #expect(error.code == .invalidJSON)
        #expect(error.message.contains("leading zero"))
        #expect(error.location?.line == 3)
        #expect(error.location?.column == 15)
        let zero = json.utf8.count - "1\n}".utf8.count
        #expect(error.location?.byteOffset == zero)
        // Offsets count from the start of the input, leading blank lines included.
        let shifted = try #require(Self.error("\n\n" + json))
        #expect(shifted.location?.line == 5)
        #expect(shifted.location?.byteOffset == error.location!.byteOffset + 2)
    }

    @Test func aTopLevelArrayGetsAClearError() throws {
        let error = try #require(Self.error(#"[{"serializedToken":"\#(Self.token)"}]"#))
        #expect(error.code == .invalidJSON)
        #expect(error.message.contains("is an array"))
        #expect(error.message.contains("REST response is an object"))
        // Also as one line of a file of encoded tokens.
        let records = Self.records(Self.token + "\n[1]\n" + Self.token)
        #expect(records.map(\.errorCode) == [nil, .invalidJSON, nil])
    }

    // MARK: - Ambiguous envelopes are refused, never resolved

    @Test(arguments: [
        #"{"serializedToken":"T","serializedToken":"T"}"#,
        #"{"serializedToken":"T","serializ\u0065dToken":"T"}"#,
        #"{"serializedToken":"T","decisions":[]}"#,
        #"{"decisions":[{"token":{"serializedToken":"T"}}],"serializedToken":"T"}"#,
        #"{"decisions":[],"decisions":[]}"#,
        #"{"expires":"1","expires":"2","serializedToken":"T"}"#,
        #"{"decisions":[{"token":{"serializedToken":"T","serializedToken":"T"}}]}"#,
        #"{"decisions":[{"token":{"serializedToken":"T","notAfter":1,"notAfter":2}}]}"#,
        #"{"decisions":[{"token":{"serializedToken":"T"},"token":{"serializedToken":"T"}}]}"#,
        #"{"decisions":[{"resource":"A","resource":"B","token":{"serializedToken":"T"}}]}"#,
        // A missing token does not hide an ambiguity after it (found by FuzzJSON: a
        // last-wins reader takes the second serializedToken).
        #"{"serializedToken":0.5e+10,"serializedToken":"T"}"#,
        #"{"serializedToken":{},"decisions":[{"token":{"serializedToken":"T"}}]}"#,
        #"{"decisions":1,"serializedToken":"T"}"#,
        #"{"decisions":{},"decisions":[{"token":{"serializedToken":"T"}}]}"#,
        #"{"decisions":[{"token":{"serializedToken":1,"serializedToken":"T"}}]}"#,
    ])
    func ambiguousEnvelopesAreInvalidTokenFormat(template: String) {
        let json = template.replacingOccurrences(of: #""T""#, with: "\"\(Self.token)\"")
        let records = Self.records(json, randomSplits: 3)
        #expect(records.map(\.errorCode) == [.ambiguousEnvelope])
        // A verifier says INVALID_TOKEN_FORMAT for it.
        let verdict = TokenVerifier(signature: .insecureSkipped, policy: VerificationPolicy()).verify(records[0].record)
        #expect(verdict.status == .invalidTokenFormat)
    }

    @Test func aDocumentThatIsNotJSONSaysSoWhateverItsEnvelopeSaidBefore() throws {
        // Found by FuzzJSON: the duplicate came first, the invalid UTF-8 after it.
        let document = Array(#"{"serializedToken":"\#(Self.token)","serializedToken":"A"#.utf8) + [0xEC, 0x6D] + Array(#""}"#.utf8)
        #expect(StreamHelpers.decodeEveryWay(document, randomSplits: 3).map(\.errorCode) == [.invalidJSON])
        #expect(Self.error(#"{"serializedToken":"A","decisions":[] x}"#)?.code == .invalidJSON)
        #expect(Self.error(#"{"serializedToken":1,"a":01}"#)?.code == .invalidJSON)
        // Valid JSON: the envelope's problem, where it is.
        let ambiguous = try #require(Self.error(#"{"serializedToken":"A",  "serializedToken":"A"}"#))
        #expect(ambiguous.code == .ambiguousEnvelope)
        #expect(ambiguous.location?.byteOffset == 25)
    }

    @Test func duplicatesOutsideTheEnvelopeAreNotItsConcern() throws {
        // RFC 8259 leaves duplicate names to the reader; members the envelope never reads are not read.
        let json = #"{"x":{"a":1,"a":2},"y":[{"serializedToken":1},{"serializedToken":2}],"serializedToken":"\#(Self.token)"}"#
        #expect(Self.records(json).map(\.errorCode) == [nil])
    }

    @Test func aMissingTokenIsReportedWhereNothingOutranksIt() throws {
        let notAString = try #require(Self.error(#"{"serializedToken":5,"x":"serializedToken"}"#))
        #expect(notAString.code == .jsonWithoutToken)
        #expect(notAString.message == "serializedToken is not a string")
        let first = try #require(Self.error(#"{"serializedToken":5,"decisions":1}"#))
        #expect(first.code == .ambiguousEnvelope)
        let notAnArray = try #require(Self.error(#"{"decisions":"x","expires":"1"}"#))
        #expect(notAnArray.message == "decisions is not an array")
    }

    // MARK: - REST v2

    @Test func decisionsRecordTheirLineAndDenialsTheirReason() throws {
        let json = """
            {"decisions": [
              {"resource": "TNT", "authorized": true, "token": {"notAfter": 1458252511000, "serializedToken": "\(Self.token)"}},

              {"resource": "CNBC", "authorized": false,
               "error": {"status": 403, "code": "authorization_denied_by_mvpd", "details": "denied by the MVPD"}},
              "not an object",
              {"resource": "NBC", "token": {"serializedToken": 42}},
              {"resource": "ABC", "token": null}
            ]}
            """
        let records = Self.records(json)
        #expect(records.map(\.record.line) == [2, 4, 6, 7, 8])
        #expect(records.map(\.errorCode) == [nil, .jsonWithoutToken, .jsonWithoutToken, .jsonWithoutToken, .jsonWithoutToken])
        #expect(records[0].record.envelope?["notAfter"] == .number("1458252511000"))
        #expect(records[1].errorMessage == "decision 2 for resource 'CNBC' carries no token (authorized: false): denied by the MVPD")
        #expect(records[1].record.envelope?["authorized"] == .bool(false))
        #expect(records[2].errorMessage == "decision 3 is not an object")
        #expect(records[3].errorMessage == "decision 4: serializedToken is not a string")
        #expect(records[4].errorMessage == "decision 5 for resource 'ABC' carries no token")
        #expect(records[4].record.envelope?["token"] == .null)
    }

    // MARK: - Limits

    @Test func depthIsLimited() {
        var configuration = DecoderConfiguration()
        configuration.maxJSONDepth = 5
        func nested(_ depth: Int) -> String {
            // The document's object is depth 1; `x` holds depth - 1 more levels.
            #"{"serializedToken":"\#(Self.token)","x":"# + String(repeating: "[", count: depth - 1) + String(repeating: "]", count: depth - 1) + "}"
        }
        #expect(Self.records(nested(5), configuration: configuration).map(\.errorCode) == [nil])
        #expect(Self.records(nested(6), configuration: configuration).map(\.errorCode) == [.jsonTooDeep])
        // The default: deep enough for any REST response, far from a stack's worth.
        #expect(DecoderConfiguration.default.maxJSONDepth == 32)
        let deep = String(repeating: #"{"a":"#, count: 100_000)
        #expect(Self.error(deep)?.code == .jsonTooDeep)
    }

    @Test func stringsAreLimited() {
        var configuration = DecoderConfiguration()
        configuration.maxJSONStringBytes = 16
        let sixteen = String(repeating: "x", count: 16)
        #expect(
            Self.records(#"{"\#(sixteen)":"\#(sixteen)","serializedToken":"\#(Self.token)"}"#, configuration: configuration)
                .map(\.errorCode) == [nil]
        )
        // Keys, kept values and skipped values alike, in bytes as written.
        for json in [
            #"{"\#(sixteen)y":1,"serializedToken":"\#(Self.token)"}"#,
            #"{"a":"\#(sixteen)y","serializedToken":"\#(Self.token)"}"#,
            #"{"a":["\#(sixteen)y"],"serializedToken":"\#(Self.token)"}"#,
            #"{"a":"\u0041\#(String(repeating: "x", count: 11))","serializedToken":"\#(Self.token)"}"#,
            #"{"a":12345678901234567,"serializedToken":"\#(Self.token)"}"#,
        ] {
            #expect(Self.error(json, configuration: configuration)?.code == .jsonLimitExceeded, "\(json.prefix(40))")
        }
        // A token may be as long as a record, not longer.
        let long = String(repeating: "A", count: DecoderConfiguration.default.maxRecordBytes + 1)
        let error = Self.error(#"{"serializedToken":"\#(long)"}"#)
        #expect(error?.code == .jsonLimitExceeded)
        #expect(error?.message.contains("maxRecordBytes") == true)
    }

    @Test func keptMembersAreLimitedAndSkippedOnesAreNot() {
        var configuration = DecoderConfiguration()
        configuration.maxJSONMembers = 10
        let fields = (1...9).map { #""f\#($0)":\#($0)"# }.joined(separator: ",")
        #expect(Self.records(#"{\#(fields),"serializedToken":"\#(Self.token)"}"#, configuration: configuration).map(\.errorCode) == [nil])
        #expect(Self.error(#"{\#(fields),"f10":10,"serializedToken":"\#(Self.token)"}"#, configuration: configuration)?.code == .jsonLimitExceeded)
        // Members of values the envelope skips are not kept, so not counted.
        let skipped = (1...1000).map { #""s\#($0)":[{}]"# }.joined(separator: ",")
        #expect(
            Self.records(#"{"x":{\#(skipped)},"serializedToken":"\#(Self.token)"}"#, configuration: configuration, randomSplits: 1)
                .map(\.errorCode) == [nil]
        )
        // Decisions count.
        let decision = #"{"token":{"serializedToken":"\#(Self.token)"}}"#
        let decisions = { (count: Int) in #"{"decisions":[\#(Array(repeating: decision, count: count).joined(separator: ","))]}"# }
        #expect(Self.records(decisions(3), configuration: configuration).map(\.errorCode) == [nil, nil, nil])
        #expect(Self.error(decisions(6), configuration: configuration)?.code == .jsonLimitExceeded)
    }

    @Test func theDocumentSizeIsLimited() {
        var configuration = DecoderConfiguration()
        configuration.maxJSONDocumentBytes = 1000
        let json = #"{"x":"\#(String(repeating: " ", count: 1000))","serializedToken":"\#(Self.token)"}"#
        #expect(Self.records(json, configuration: configuration, randomSplits: 2).map(\.errorCode) == [.inputTooLarge])
    }

    // MARK: - Cost: linear, small constant, flat memory

    /// `{"x":[{},{},…],"serializedToken":"…"}` of about `bytes`: what made
    /// Foundation's decoder take 850 MB and 70 s at 30 MB.
    static func amplifier(bytes: Int, token: String = token) -> [UInt8] {
        var document = Array(#"{"x":["#.utf8)
        document.reserveCapacity(bytes + token.utf8.count + 64)
        let element = Array("{},".utf8)
        while document.count < bytes { document += element }
        document += Array(#"{}],"serializedToken":""#.utf8) + Array(token.utf8) + Array(#""}"#.utf8)
        return document
    }

    @Test func unusedMembersCostNoMemory() {
        let document = Self.amplifier(bytes: 8 * 1024 * 1024)
        let decoder = TokenStreamDecoder()
        var records: [DecodedRecord] = []
        var maxRetained = 0
        var offset = 0
        while offset < document.count {
            let end = min(offset + 64 * 1024, document.count)
            records += decoder.feed(document[offset..<end])
            maxRetained = max(maxRetained, decoder.retainedBytes)
            offset = end
        }
        records += decoder.finish()
        #expect(records.map(\.errorCode) == [nil])
        // The token and one chunk's worth of scanner state, whatever precedes it.
        #expect(maxRetained < 16 * 1024, "retained \(maxRetained) bytes")
    }

    /// A JSON line costs at most a few times a Base64 line of the same size (docs/DESIGN.md#transport-forms).
    /// A ratio of two timings in one run, generous on purpose: not an absolute figure.
    @Test func aJSONLineCostsAFewBase64LinesOfTheSameSize() {
        let base64Line = Array((Self.token + "\n").utf8)
        var base64 = [UInt8]()
        while base64.count < 2 * 1024 * 1024 { base64 += base64Line }
        let json = Self.amplifier(bytes: base64.count - Self.token.utf8.count)
        func seconds(_ input: [UInt8], expecting count: Int) -> Double {
            var best = Double.infinity
            for _ in 0..<3 {
                let start = ContinuousClock.now
                let records = StreamHelpers.decode(input, splits: Array(stride(from: 0, to: input.count, by: 64 * 1024)))
                let elapsed = ContinuousClock.now - start
                #expect(records.count == count && records.allSatisfy { $0.errorCode == nil })
                best = min(best, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
            }
            return best
        }
        let base64Seconds = seconds(base64, expecting: base64.count / base64Line.count)
        let jsonSeconds = seconds(json, expecting: 1)
        let ratio = jsonSeconds / base64Seconds
        print("JSON \(json.count) bytes: \(jsonSeconds) s; Base64 lines \(base64.count) bytes: \(base64Seconds) s; ratio \(ratio)")
        #expect(ratio < 8, "a JSON document costs \(ratio)× Base64 lines of the same size")
    }
}
