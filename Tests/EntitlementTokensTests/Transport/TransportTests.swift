import Foundation
import Testing

@testable import EntitlementTokens

/// Every transport form of docs/DESIGN.md#transport-forms, detected from content.
@Suite struct TransportTests {
    static let raw = Fixtures.vendorMedia

    @Test func rawXMLWithDeclarationAndWhitespace() throws {
        let decoded = try Fixtures.decode("  \n<?xml version=\"1.0\" encoding=\"utf-8\"?>\n\(Self.raw)\n\n")
        #expect(decoded.transport == TransportForm(encoding: .raw))
    }

    /// What a later stage's error location points into: the XML with the
    /// transport form undone, even when that XML does not frame or parse.
    @Test func decodedXMLUndoesTheTransportFormOnly() throws {
        let broken = "<signatureInfo>AAAA<signatureInfo>\n<authToken>\n</authTok"
        let decoder = TokenDecoder()
        #expect(try decoder.decodedXML(of: Array(broken.utf8)) == Array(broken.utf8))
        #expect(try decoder.decodedXML(of: Array(Fixtures.base64(broken).utf8)) == Array(broken.utf8))
        let percent = broken.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        #expect(try decoder.decodedXML(of: Array(percent.utf8)) == Array(broken.utf8))
        #expect(throws: TokenError(.invalidBase64, stage: .transport, "")) { try decoder.decodedXML(of: Array("PHNpZ25h*dHVyZQ".utf8)) }
    }

    @Test func rawXMLWithUTF8ByteOrderMark() throws {
        let decoded = try TokenDecoder().decode([0xEF, 0xBB, 0xBF] + Array(Self.raw.utf8))
        #expect(decoded.token.requestorID == "MSNBC")
    }

    @Test(arguments: [true, false])
    func base64WithAndWithoutPadding(padded: Bool) throws {
        var raw = Self.raw
        while raw.utf8.count % 3 == 0 { raw += " " }  // trailing white space makes padding appear
        var text = Fixtures.base64(raw)
        #expect(text.hasSuffix("="))
        if !padded { text = text.replacingOccurrences(of: "=", with: "") }
        let decoded = try Fixtures.decode(text)
        #expect(decoded.transport.encoding == .base64)
        #expect(decoded.token.requestorID == "MSNBC")
    }

    @Test func base64WrappedAcrossLines() throws {
        let encoded = Fixtures.base64(Self.raw)
        var wrapped = ""
        for (index, character) in encoded.enumerated() {
            if index > 0 && index % 76 == 0 { wrapped += "\r\n" }
            wrapped.append(character)
        }
        #expect(try Fixtures.decode(wrapped).transport.encoding == .base64)
    }

    @Test func base64url() throws {
        // Choose a token whose Base64 contains '+' or '/' so the URL alphabet really differs.
        var element = Fixtures.mediaElement()
        var suffix = 0
        while !Fixtures.base64(Fixtures.legacy(element)).contains(where: { $0 == "+" || $0 == "/" }) {
            suffix += 1
            element = Fixtures.mediaElement(mvpd: "mvpd\(suffix)~~~")
        }
        let decoded = try Fixtures.decode(Fixtures.base64url(Fixtures.legacy(element)))
        #expect(decoded.transport.encoding == .base64url)
    }

    @Test func percentEncodedRawXML() throws {
        let decoded = try Fixtures.decode(Fixtures.percentEncoded(Self.raw))
        #expect(decoded.transport == TransportForm(percentEncoded: true, encoding: .raw))
    }

    @Test func percentEncodedBase64AsQueryParameter() throws {
        let encoded = Fixtures.percentEncoded(Fixtures.base64(Self.raw))
        #expect(encoded.contains("%"))
        for text in [encoded, "auth=\(encoded)", "token=\(encoded)"] {
            let decoded = try Fixtures.decode(text)
            #expect(decoded.transport == TransportForm(percentEncoded: true, encoding: .base64))
        }
    }

    @Test func spaceInsteadOfPlusIsDiagnosedNotRepaired() throws {
        let encoded = Fixtures.base64(Self.raw + "?>>")
        #expect(encoded.contains("+"))
        let mangled = encoded.replacingOccurrences(of: "+", with: " ")
        #expect(throws: TokenError(.unencodedPlus, stage: .transport, "")) { try Fixtures.decode(mangled) }
        do {
            _ = try Fixtures.decode(mangled)
        } catch {
            #expect(error.message.contains("'+'"))
            #expect(error.message.contains("query string"))
        }
    }

    @Test func spaceInsteadOfPlusRepairedOnlyWhenAskedWithAWarning() throws {
        let encoded = Fixtures.base64(Self.raw + "?>>")
        let mangled = encoded.replacingOccurrences(of: "+", with: " ")
        var configuration = DecoderConfiguration()
        configuration.repairsSpacesAsPlus = true
        // The trailing "?>>" is garbage after the token; use a token without it for the repair check.
        var clean = Self.raw
        var pad = 0
        while !Fixtures.base64(clean).contains("+") {
            pad += 1
            clean = Fixtures.legacy(Fixtures.mediaElement(mvpd: "m\(pad)>>>"))
        }
        let repaired = try Fixtures.decode(Fixtures.base64(clean).replacingOccurrences(of: "+", with: " "), configuration: configuration)
        #expect(repaired.warnings.contains { $0.contains("repaired") })
        #expect(Fixtures.errorCode(mangled) == .unencodedPlus)
    }

    @Test func restV1Envelope() throws {
        let json =
            #"{"mvpd":"Comcast","requestor":"MSNBC","resource":"MSNBC","serializedToken":"\#(Fixtures.base64(Self.raw))","expires":"1458252511000"}"#
        let records = StreamHelpers.decodeAll(json)
        try #require(records.count == 1)
        let decoded = try records[0].result.get()
        #expect(decoded.transport == TransportForm(envelope: .restV1, encoding: .base64))
        // Values keep their JSON types: this one is a string in the document.
        #expect(decoded.envelope?["expires"] == .string("1458252511000"))
        #expect(decoded.envelope?.fields.contains { $0.key == "serializedToken" } == false)
    }

    @Test func restV2DecisionsEachGiveOneInput() throws {
        let token = Fixtures.base64(Self.raw)
        let json = """
            {"resources": ["MSNBC", "CNBC", "NBC"],
             "decisions": [
               {"resource": "MSNBC", "serviceProvider": "MSNBC", "authorized": true, "source": "mvpd",
                "token": {"notBefore": 1458252091000, "notAfter": 1458252511000, "serializedToken": "\(token)"}},
               {"resource": "CNBC", "authorized": false, "error": {"status": 403, "code": "authorization_denied_by_mvpd", "details": "denied"}},
               {"resource": "NBC", "authorized": true, "token": {"serializedToken": "\(token)"}}
             ]}
            """
        let records = StreamHelpers.decodeAll(json)
        #expect(records.map(\.index) == [1, 2, 3])
        let first = try records[0].result.get()
        #expect(first.transport.envelope == .restV2)
        #expect(first.envelope?["notAfter"] == .number("1458252511000"))
        #expect(first.envelope?["authorized"] == .bool(true))
        // Each decision's record starts on the line of its decision.
        #expect(records.map(\.record.line) == [3, 5, 6])
        #expect(records[1].errorCode == .jsonWithoutToken)
        #expect(records[1].errorMessage?.contains("CNBC") == true)
        #expect(try records[2].result.get().token.requestorID == "MSNBC")
    }

    @Test(arguments: [
        (#"{"serializedToken": 42}"#, TokenError.Code.jsonWithoutToken),
        (#"{"foo": "bar"}"#, .jsonWithoutToken),
        (#"{"decisions": []}"#, .jsonWithoutToken),
        (#"{"serializedToken": "abc"#, .invalidJSON),
        (#"{"serializedToken": "!!!"}"#, .invalidBase64),
    ])
    func malformedRESTDocuments(json: String, code: TokenError.Code) {
        let records = StreamHelpers.decodeAll(json)
        #expect(records.count == 1)
        #expect(records.first?.errorCode == code)
    }

    @Test(arguments: [
        ("", TokenError.Code.emptyInput),
        ("   \n ", .emptyInput),
        ("PHNpZ25hdHVyZUluZm8+!", .invalidBase64),
        ("PHNp+ZnV_", .invalidBase64),  // mixed alphabets
        ("PHNpZ==nV", .invalidBase64),  // padding in the middle
        ("PHNpZ", .invalidBase64),  // one dangling character
        ("aGVsbG8gd29ybGQ=", .notXML),  // "hello world"
        ("%3CsignatureInfo%3", .invalidPercentEncoding),
        ("%3Cx%ZZ", .invalidPercentEncoding),
    ])
    func malformedTransports(text: String, code: TokenError.Code) {
        #expect(Fixtures.errorCode(text) == code)
    }

    @Test func malformedBase64SaysWhatWasAssumedAndWhere() {
        do {
            _ = try Fixtures.decode("PHNpZ25h!dHVyZQ==")
            Issue.record("decoded")
        } catch {
            #expect(error.code == .invalidBase64)
            #expect(error.message.contains("assumed Base64"))
            #expect(error.location?.byteOffset == 8)
        }
    }

    @Test func utf16IsRefused() {
        var utf16: [UInt8] = [0xFF, 0xFE]
        for unit in Self.raw.utf16 { utf16 += [UInt8(unit & 0xFF), UInt8(unit >> 8)] }
        #expect(Fixtures.errorCode(utf16) == .unsupportedEncoding)
        #expect(Fixtures.errorCode(Array(utf16.dropFirst(2))) == .unsupportedEncoding)
        // Base64 of UTF-16 too.
        let encoded = Base64.encode(utf16)
        #expect(Fixtures.errorCode(encoded) == .unsupportedEncoding)
    }

    @Test func base64RoundTrip() throws {
        for length in 0..<40 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            for alphabet in [Base64.Alphabet.standard, .url] {
                for padded in [true, false] {
                    let text = Base64.encode(bytes, alphabet: alphabet, padded: padded)
                    #expect(try Base64.decode(Array(text.utf8), whitespace: .lineBreaks).bytes == bytes)
                }
            }
        }
    }

    /// The fast path stores eight bytes per eight characters, six of them data:
    /// line breaks at every width move where each store lands against the
    /// output's end, and every decoded byte must still be the encoded one.
    @Test func base64WrappedAtEveryWidthDecodesExactly() throws {
        for length in [0, 1, 5, 6, 7, 12, 47, 48, 49, 96, 301] {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 73 &+ 5) }
            let text = Array(Base64.encode(bytes).utf8)
            for width in 1...20 {
                var wrapped: [UInt8] = []
                for (index, byte) in text.enumerated() {
                    if index > 0, index % width == 0 { wrapped.append(contentsOf: [0x0D, 0x0A]) }
                    wrapped.append(byte)
                }
                #expect(try Base64.decode(wrapped, whitespace: .lineBreaks).bytes == bytes, "length \(length), width \(width)")
            }
        }
    }
}
