import Testing
@testable import EntitlementTokens

/// Each hostile input gets its own specific, typed error (SPEC §4).
@Suite struct HostileInputTests {
    static let media = Fixtures.mediaElement()
    static let sig = "<signatureInfo>\(Fixtures.signature)<signatureInfo>"

    static let billionLaughs = """
        <?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">\
        <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>\
        \(sig)<authToken><requestorID>&lol3;</requestorID><resourceID>x</resourceID><ttl>1</ttl><issueTime>2016-03-17 15:01:31 -0700</issueTime></authToken>
        """

    /// Shown by name in test output: the inputs themselves can be 64 KiB.
    struct HostileCase: CustomTestStringConvertible, Sendable {
        var name: String
        var text: String
        var code: TokenError.Code
        var testDescription: String { name }
    }

    static let cases: [HostileCase] = table.map { HostileCase(name: $0.0, text: $0.1, code: $0.2) }

    static let table: [(String, String, TokenError.Code)] = [
        ("billion laughs", billionLaughs, .doctypeForbidden),
        ("external entity", #"<!DOCTYPE t [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>"# + sig + Fixtures.mediaElement(requestor: "&xxe;"), .doctypeForbidden),
        ("DOCTYPE after the signature", sig + "<!DOCTYPE authToken>" + media, .doctypeForbidden),
        ("undefined entity", sig + Fixtures.mediaElement(requestor: "&xxe;"), .entityForbidden),
        ("undefined entity in an attribute", sig + Fixtures.mediaElement(extra: #"<x a="&foo;"/>"#), .entityForbidden),
        ("comment inside the token", sig + Fixtures.mediaElement(extra: "<!-- hi -->"), .commentForbidden),
        ("comment inside a field", sig + Fixtures.mediaElement(requestor: "MS<!-- -->NBC"), .commentForbidden),
        ("comment before the token", "<!-- hi -->" + sig + media, .commentForbidden),
        ("comment after the token", sig + media + "<!-- hi -->", .commentForbidden),
        ("processing instruction inside", sig + Fixtures.mediaElement(extra: "<?php evil() ?>"), .processingInstructionForbidden),
        ("processing instruction outside", sig + media + "<?xml-stylesheet href='x'?>", .processingInstructionForbidden),
        ("XML declaration not at the start", sig + "<?xml version=\"1.0\"?>" + media, .processingInstructionForbidden),
        ("XML declaration with another encoding", "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>" + sig + media, .unsupportedEncoding),
        ("XML declaration without version", "<?xml encoding=\"UTF-8\"?>" + sig + media, .invalidXMLDeclaration),
        ("token root nested inside the token", sig + Fixtures.mediaElement(extra: "<authToken/>"), .duplicateTokenElement),
        ("other token root nested inside", sig + Fixtures.mediaElement(extra: "<x><simpleAuthorizationToken/></x>"), .duplicateTokenElement),
        ("signatureInfo nested inside the token", sig + Fixtures.mediaElement(extra: "<signatureInfo>AAAA</signatureInfo>"), .duplicateSignatureBlock),
        ("ttl negative", sig + Fixtures.mediaElement(ttl: "-1"), .invalidFieldValue),
        ("ttl non-numeric", sig + Fixtures.mediaElement(ttl: "seven minutes"), .invalidFieldValue),
        ("ttl beyond 63 bits", sig + Fixtures.mediaElement(ttl: "9223372036854775808"), .invalidFieldValue),
        ("duplicate field", sig + Fixtures.mediaElement(extra: "<requestorID>EVIL</requestorID>"), .duplicateField),
        ("duplicate field in a nested path", Fixtures.legacy(Fixtures.authorizationElement().replacingOccurrences(
            of: "</simpleTokenDeviceID>", with: "<simpleTokenFingerprint>0000000000000000000000000000000000000000</simpleTokenFingerprint></simpleTokenDeviceID>")), .duplicateField),
        ("missing ttl", sig + Fixtures.mediaElement(ttl: nil), .missingField),
        ("missing issueTime", sig + Fixtures.mediaElement(issueTime: nil), .missingField),
        ("missing authN expiry", Fixtures.legacy("<simpleAuthenticationToken><simpleTokenRequestorID>T</simpleTokenRequestorID></simpleAuthenticationToken>"), .missingField),
        ("missing authZ resource", Fixtures.legacy("<simpleAuthorizationToken><simpleTokenRequestorID>T</simpleTokenRequestorID><simpleTokenTTL>2011/03/19 02:29:34 GMT +0200</simpleTokenTTL></simpleAuthorizationToken>"), .missingField),
        ("mixed content", sig + Fixtures.mediaElement(extra: "<x>text<y>1</y></x>"), .mixedContent),
        ("mixed content after a child", sig + Fixtures.mediaElement(extra: "<x><y>1</y>tail</x>"), .mixedContent),
        ("text directly in the root", sig + "<authToken>loose<requestorID>A</requestorID></authToken>", .mixedContent),
        ("depth limit", sig + Fixtures.mediaElement(extra: String(repeating: "<d>", count: 16) + String(repeating: "</d>", count: 16)), .depthLimitExceeded),
        ("element count limit", sig + Fixtures.mediaElement(extra: String(repeating: "<e>1</e>", count: 600)), .elementCountLimitExceeded),
        ("field length limit", sig + Fixtures.mediaElement(requestor: String(repeating: "A", count: 32 * 1024 + 1)), .fieldTooLong),
        ("attribute length limit", sig + Fixtures.mediaElement(extra: "<x a=\"\(String(repeating: "A", count: 32 * 1024 + 1))\"/>"), .fieldTooLong),
        ("size limit", sig + Fixtures.mediaElement(extra: String(repeating: "<e>\(String(repeating: "x", count: 1000))</e>", count: 66)), .tokenTooLarge),
        ("two token elements", sig + media + media, .duplicateTokenElement),
        ("two different token elements", sig + media + Fixtures.authorizationElement(), .duplicateTokenElement),
        ("token wrapped in another element", sig + "<wrapper>\(media)</wrapper>", .duplicateTokenElement),
        ("unknown root", sig + "<notAToken><requestorID>A</requestorID></notAToken>", .unknownTokenRoot),
        ("trailing garbage", sig + media + "garbage", .unexpectedTopLevelContent),
        ("stray end tag", sig + media + "</authToken>", .unexpectedTopLevelContent),
        ("CDATA at the top level", sig + media + "<![CDATA[x]]>", .unexpectedTopLevelContent),
        ("missing signature block", media, .missingSignatureBlock),
        ("two signature blocks", sig + sig + media, .duplicateSignatureBlock),
        ("two closed signature blocks", "<signatureInfo>A</signatureInfo>" + media + "<signatureInfo>B</signatureInfo>", .duplicateSignatureBlock),
        ("unterminated signature block", "<signatureInfo>AAAA" + media, .unterminatedSignatureBlock),
        ("signature block at the end never closed", media + "<signatureInfo>AAAA", .unterminatedSignatureBlock),
        ("signatureInfo with attributes", "<signatureInfo alg=\"none\">AAAA<signatureInfo>" + media, .invalidSignatureBlock),
        ("missing token element", sig, .missingTokenElement),
        ("unterminated token element", sig + "<authToken><requestorID>A</requestorID>", .unterminatedTokenElement),
        ("unterminated start tag", sig + "<authToken", .unterminatedTokenElement),
        ("mismatched end tag", sig + "<authToken><requestorID>A</resourceID></authToken>", .malformedXML),
        ("unquoted attribute", sig + "<authToken a=b></authToken>", .malformedXML),
        ("stray less-than in text", sig + Fixtures.mediaElement(requestor: "a < b"), .malformedXML),
        ("control character", sig + Fixtures.mediaElement(requestor: "a\u{01}b"), .malformedXML),
        ("undeclared namespace prefix", sig + Fixtures.mediaElement(extra: "<p:x>1</p:x>"), .malformedXML),
    ]

    @Test(arguments: cases)
    func hostileInputIsRefusedWithItsError(_ hostile: HostileCase) {
        #expect(Fixtures.errorCode(hostile.text) == hostile.code, "\(hostile.name)")
        // The same holds whatever transport carried it.
        #expect(Fixtures.errorCode(Fixtures.base64(hostile.text)) == hostile.code, "\(hostile.name) as Base64")
    }

    @Test(arguments: [
        ("invalid UTF-8 in a field", [0xC3, 0x28] as [UInt8]),
        ("overlong encoding", [0xC0, 0xAF]),
        ("lone continuation byte", [0x80]),
        ("surrogate half", [0xED, 0xA0, 0x80]),
        ("truncated sequence", [0xE2, 0x82]),
    ])
    func invalidUTF8IsRefused(name: String, bytes: [UInt8]) {
        let text = Array("\(Self.sig)<authToken><requestorID>".utf8) + bytes
            + Array("</requestorID><resourceID>x</resourceID><ttl>1</ttl><issueTime>2016-03-17 15:01:31 -0700</issueTime></authToken>".utf8)
        #expect(Fixtures.errorCode(text) == .invalidUTF8, "\(name)")
    }

    @Test func leadingGarbage() {
        // Raw text that does not start with '<' is taken for an encoded token...
        #expect(Fixtures.errorCode("garbage" + Self.sig + Self.media) == .invalidBase64)
        // ...and once decoded, text before the signature block is top-level content.
        #expect(Fixtures.errorCode(Fixtures.base64("<x/>" + Self.sig + Self.media)) == .duplicateTokenElement)
        #expect(Fixtures.errorCode(Fixtures.base64(" " + Self.sig + "garbage" + Self.media)) == .unexpectedTopLevelContent)
    }

    @Test func limitsComeFromTheConfiguration() {
        var configuration = DecoderConfiguration()
        configuration.maxDepth = 2
        #expect(Fixtures.errorCode(Fixtures.legacy(Fixtures.mediaElement(extra: "<a><b/></a>")), configuration: configuration) == .depthLimitExceeded)
        configuration = DecoderConfiguration()
        configuration.maxElementCount = 7
        #expect(Fixtures.errorCode(Fixtures.legacy(Fixtures.mediaElement()), configuration: configuration) == nil)
        configuration.maxElementCount = 6
        #expect(Fixtures.errorCode(Fixtures.legacy(Fixtures.mediaElement()), configuration: configuration) == .elementCountLimitExceeded)
        configuration = DecoderConfiguration()
        configuration.maxFieldBytes = 5
        #expect(Fixtures.errorCode(Fixtures.legacy(Fixtures.mediaElement(requestor: "ABCDE")), configuration: configuration) == .fieldTooLong)
    }

    @Test func errorsCarryALocationThatReadsLikeACompiler() {
        let text = "\(Self.sig)\n<authToken>\n<requestorID>A</requestorID>\n<requestorID>B</requestorID>\n</authToken>"
        do {
            _ = try Fixtures.decode(text)
            Issue.record("decoded")
        } catch {
            #expect(error.code == .duplicateField)
            #expect(error.location?.line == 4)
            let offset = error.location?.byteOffset ?? -1
            let bytes = Array(text.utf8)
            #expect(offset >= 0 && offset < bytes.count)
            #expect(error.description.hasPrefix("4:"))
            #expect(error.description.hasSuffix("[duplicateField]"))
        }
        do {
            _ = try Fixtures.decode("\(Self.sig)\n<authToken>\n  <!-- x -->\n</authToken>")
        } catch {
            #expect(error.code == .commentForbidden)
            #expect(error.location == SourceLocation(byteOffset: Self.sig.utf8.count + 15, line: 3, column: 3))
        }
    }

    @Test func mediaRSSThatIsNotRSSIsAnOpaqueStringWithAWarning() throws {
        let decoded = try Fixtures.decode(Fixtures.legacy(Fixtures.mediaElement(resourceXML: "<![CDATA[<rss><!DOCTYPE x></rss>]]>")))
        #expect(decoded.mediaRSS == nil)
        #expect(decoded.warnings.contains { $0.contains("not a Media RSS document") })
        #expect(decoded.token.resourceID == "<rss><!DOCTYPE x></rss>")
    }
}
