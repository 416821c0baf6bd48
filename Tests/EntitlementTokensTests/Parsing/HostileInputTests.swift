import Testing

@testable import EntitlementTokens

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Each hostile input gets its own specific, typed error (docs/DESIGN.md#parsing-rules).
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
        (
            "external entity", #"<!DOCTYPE t [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>"# + sig + Fixtures.mediaElement(requestor: "&xxe;"),
            .doctypeForbidden
        ),
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
        (
            "signatureInfo nested inside the token", sig + Fixtures.mediaElement(extra: "<signatureInfo>AAAA</signatureInfo>"),
            .duplicateSignatureBlock
        ),
        ("ttl negative", sig + Fixtures.mediaElement(ttl: "-1"), .invalidFieldValue),
        ("ttl non-numeric", sig + Fixtures.mediaElement(ttl: "seven minutes"), .invalidFieldValue),
        ("ttl beyond 63 bits", sig + Fixtures.mediaElement(ttl: "9223372036854775808"), .invalidFieldValue),
        ("duplicate field", sig + Fixtures.mediaElement(extra: "<requestorID>EVIL</requestorID>"), .duplicateField),
        (
            "duplicate field in a nested path",
            Fixtures.legacy(
                Fixtures.authorizationElement().replacingOccurrences(
                    of: "</simpleTokenDeviceID>",
                    with: "<simpleTokenFingerprint>0000000000000000000000000000000000000000</simpleTokenFingerprint></simpleTokenDeviceID>"
                )
            ), .duplicateField
        ),
        ("missing ttl", sig + Fixtures.mediaElement(ttl: nil), .missingField),
        ("missing issueTime", sig + Fixtures.mediaElement(issueTime: nil), .missingField),
        (
            "missing authN expiry",
            Fixtures.legacy("<simpleAuthenticationToken><simpleTokenRequestorID>T</simpleTokenRequestorID></simpleAuthenticationToken>"),
            .missingField
        ),
        (
            "missing authZ resource",
            Fixtures.legacy(
                "<simpleAuthorizationToken><simpleTokenRequestorID>T</simpleTokenRequestorID><simpleTokenTTL>2011/03/19 02:29:34 GMT +0200</simpleTokenTTL></simpleAuthorizationToken>"
            ), .missingField
        ),
        ("mixed content", sig + Fixtures.mediaElement(extra: "<x>text<y>1</y></x>"), .mixedContent),
        ("mixed content after a child", sig + Fixtures.mediaElement(extra: "<x><y>1</y>tail</x>"), .mixedContent),
        ("text directly in the root", sig + "<authToken>loose<requestorID>A</requestorID></authToken>", .mixedContent),
        (
            "depth limit", sig + Fixtures.mediaElement(extra: String(repeating: "<d>", count: 16) + String(repeating: "</d>", count: 16)),
            .depthLimitExceeded
        ),
        ("element count limit", sig + Fixtures.mediaElement(extra: String(repeating: "<e>1</e>", count: 600)), .elementCountLimitExceeded),
        ("field length limit", sig + Fixtures.mediaElement(requestor: String(repeating: "A", count: 32 * 1024 + 1)), .fieldTooLong),
        ("attribute length limit", sig + Fixtures.mediaElement(extra: "<x a=\"\(String(repeating: "A", count: 32 * 1024 + 1))\"/>"), .fieldTooLong),
        (
            "size limit", sig + Fixtures.mediaElement(extra: String(repeating: "<e>\(String(repeating: "x", count: 1000))</e>", count: 66)),
            .tokenTooLarge
        ),
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
        let text =
            Array("\(Self.sig)<authToken><requestorID>".utf8) + bytes
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

/// Attributes and namespace declarations: at most 64 per element and 512 per
/// token (docs/DESIGN.md#limits-of-the-decoder), and every stage after parsing linear in how many there are.
@Suite struct AttributeLimitTests {
    /// `count` attributes (namespace declarations for the first `namespaces` of them) on one `<name>`.
    static func element(_ name: String, attributes count: Int, namespaces: Int = 0) -> String {
        let declarations = (0..<min(namespaces, count)).map { #" xmlns:p\#($0)="urn:\#($0)""# }.joined()
        let plain = (0..<max(0, count - namespaces)).map { #" a\#($0)="""# }.joined()
        return "<\(name)\(declarations)\(plain)/>"
    }

    /// `total` attributes spread over elements of at most `perElement`, each element named apart.
    static func spread(_ total: Int, perElement: Int = 64) -> String {
        stride(from: 0, to: total, by: perElement).enumerated().map { index, start in
            element("x\(index)", attributes: min(perElement, total - start))
        }.joined()
    }

    @Test(arguments: [(64, 0), (64, 64), (64, 10)])
    func sixtyFourOnOneElementAreFine(count: Int, namespaces: Int) throws {
        let decoded = try Fixtures.decode(Fixtures.legacy(Fixtures.mediaElement(extra: Self.element("x", attributes: count, namespaces: namespaces))))
        #expect(decoded.fields.filter(\.isAttribute).count == count)
    }

    @Test(arguments: [(65, 0), (65, 65), (65, 1), (6_000, 0)])
    func moreOnOneElementAreRefusedWithWhere(count: Int, namespaces: Int) {
        // On a child element, on the second line: the location must say so.
        let element = Fixtures.mediaElement(extra: "\n" + Self.element("x", attributes: count, namespaces: namespaces))
        do {
            _ = try Fixtures.decode(Fixtures.legacy(element))
            Issue.record("decoded \(count) attributes on one element")
        } catch {
            #expect(error.code == .attributeLimitExceeded)
            #expect(error.stage == .parsing)
            #expect(error.location?.line == 2)
            #expect(error.location?.column != nil)
            #expect(error.message.contains("maxAttributesPerElement"))
        }
    }

    @Test func theRootCountsToo() {
        let root = Self.element("authToken", attributes: 65).dropLast(2) + ">"
        let element = Fixtures.mediaElement().replacingOccurrences(of: "<authToken>", with: String(root))
        #expect(Fixtures.errorCode(Fixtures.legacy(element)) == .attributeLimitExceeded)
    }

    @Test func fiveHundredTwelveInATokenAreFineAndOneMoreIsNot() {
        #expect(Fixtures.errorCode(Fixtures.legacy(Fixtures.mediaElement(extra: Self.spread(512)))) == nil)
        let over = Fixtures.legacy(Fixtures.mediaElement(extra: Self.spread(513)))
        #expect(Fixtures.errorCode(over) == .attributeLimitExceeded)
        do {
            _ = try Fixtures.decode(over)
        } catch {
            #expect(error.message.contains("maxAttributesPerToken"))
            #expect(error.location != nil)
        }
        // Namespace declarations count with the attributes.
        let mixed = Self.spread(500) + Self.element("y", attributes: 13, namespaces: 13)
        #expect(Fixtures.errorCode(Fixtures.legacy(Fixtures.mediaElement(extra: mixed))) == .attributeLimitExceeded)
    }

    @Test func theLimitsComeFromTheConfiguration() {
        var configuration = DecoderConfiguration()
        configuration.maxAttributesPerElement = 2
        let three = Fixtures.legacy(Fixtures.mediaElement(extra: Self.element("x", attributes: 3)))
        #expect(Fixtures.errorCode(three, configuration: configuration) == .attributeLimitExceeded)
        configuration = DecoderConfiguration()
        configuration.maxAttributesPerToken = 5
        let six = Fixtures.legacy(Fixtures.mediaElement(extra: Self.spread(6, perElement: 3)))
        #expect(Fixtures.errorCode(six, configuration: configuration) == .attributeLimitExceeded)
        #expect(Fixtures.errorCode(six) == nil)
    }

    /// Equal signs in text, CDATA and attribute values are not attributes.
    @Test func onlyAttributesCountNotEqualSigns() throws {
        let many = String(repeating: "a=b ", count: 200)
        let text = Fixtures.mediaElement(
            requestor: many,
            resourceXML: "<![CDATA[<x \(String(repeating: "k=\"v\" ", count: 100))>]]>",
            extra: #"<x a="\#(String(repeating: "=", count: 300))"/>"#
        )
        let decoded = try Fixtures.decode(Fixtures.legacy(text))
        #expect(decoded.field("x/@a")?.utf8.count == 300)
        #expect(CrowdedStartTag.find(in: Array(text.utf8).span, limit: 64) == nil)
        #expect(CrowdedStartTag.find(in: Array("<r>\(Self.element("x", attributes: 65))</r>".utf8).span, limit: 64) == 3)
    }

    /// A Media RSS resource goes through the same parser and the same limits.
    @Test func aMediaRSSResourceHasTheSameLimits() throws {
        let rss = "<rss><channel><title>T</title>\(Self.element("x", attributes: 65))</channel></rss>"
        let decoded = try Fixtures.decode(Fixtures.legacy(Fixtures.mediaElement(resourceXML: "<![CDATA[\(rss)]]>")))
        #expect(decoded.mediaRSS == nil)
        #expect(decoded.warnings.contains { $0.contains("attributes") })
    }

    /// docs/DESIGN.md#limits-of-the-decoder: end to end, a token with 512 attributes costs at most 20 times
    /// a plain one — a ratio within one run, generous on purpose, because what
    /// it guards against is growth with the square of the count (6,000
    /// attributes once cost 2,500 times a plain token in the CLI's JSON).
    @Test func costPerTokenStaysLinearInAttributes() throws {
        let key = Minting.key()
        func signed(_ element: String) throws -> [UInt8] {
            Array("<signatureInfo>\(Base64.encode(try key.signature(for: Array(element.utf8))))<signatureInfo>\(element)".utf8)
        }
        let issue = Minting.issued.formatted(.dashedOffset)
        let plain = try signed(Fixtures.mediaElement(requestor: "TNT", resourceXML: "TNT", issueTime: issue))
        let crowded = try signed(Fixtures.mediaElement(requestor: "TNT", resourceXML: "TNT", issueTime: issue, extra: Self.spread(512)))
        let verifier = Minting.verifier {
            $0.requestorID = "TNT"
            $0.resourceID = "TNT"
            $0.allowedMVPDs = ["Comcast_SSO"]
        }
        func work(_ token: [UInt8]) -> Int {
            let verdict = verifier.verify(token)
            guard let decoded = verdict.token, verdict.status == .validToken else { return -1 }
            // What a front end does with every field: group the paths that
            // repeat (none here), look one up.
            let groups = TokenFieldGroup.hasRepeatedPath(decoded.fields) ? TokenFieldGroup.grouping(decoded.fields).count : decoded.fields.count
            _ = decoded.field("x7/@a63")
            return groups
        }
        #expect(work(plain) == 6)
        #expect(work(crowded) == 6 + 8 + 512)  // each of the 8 elements is a field too
        let ratio = CostRatio.measure(plain: { _ = work(plain) }, heavy: { _ = work(crowded) })
        #expect(ratio < 20, "a token with 512 attributes costs \(ratio)× a plain one")
    }
}

/// The cost of one call of `heavy` over one of `plain`, in CPU time of the
/// calling thread (tests run in parallel on few cores: wall time would count
/// the time other tests had the core): the median of the ratios of many
/// short back-to-back runs of each.
enum CostRatio {
    static func measure(
        plain: () -> Void,
        heavy: () -> Void,
        pairs: Int = 21,
        plainCalls: Int = 40,
        heavyCalls: Int = 4
    ) -> Double {
        func threadSeconds() -> Double {
            var now = timespec()
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
            return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
        }
        func perCall(_ body: () -> Void, _ calls: Int) -> Double {
            let start = threadSeconds()
            for _ in 0..<calls { body() }
            return (threadSeconds() - start) / Double(calls)
        }
        plain()
        heavy()
        let ratios = (0..<pairs).map { _ in perCall(heavy, heavyCalls) / perCall(plain, plainCalls) }.sorted()
        return ratios[pairs / 2]
    }
}

/// Grouping fields by path for display: by bytes, in first-occurrence order, linear.
@Suite struct TokenFieldGroupTests {
    @Test func groupsByBytesInTheOrderPathsFirstOccur() {
        let composed = "caf\u{E9}"
        let decomposed = "cafe\u{301}"
        let fields = [
            TokenField(path: "a", value: "1"), TokenField(path: composed, value: "2"),
            TokenField(path: decomposed, value: "3"), TokenField(path: "a", value: "4"),
        ]
        #expect(TokenFieldGroup.hasRepeatedPath(fields))
        #expect(
            TokenFieldGroup.grouping(fields) == [
                TokenFieldGroup(path: "a", values: ["1", "4"]),
                TokenFieldGroup(path: composed, values: ["2"]),
                TokenFieldGroup(path: decomposed, values: ["3"]),
            ]
        )
        // Canonically equivalent paths are not a repeat.
        #expect(!TokenFieldGroup.hasRepeatedPath(Array(fields.prefix(3))))
    }

    @Test(arguments: [3, 16, 17, 600])
    func findsARepeatAtAnySize(count: Int) {
        var fields = (0..<count).map { TokenField(path: "p\($0)", value: "") }
        #expect(!TokenFieldGroup.hasRepeatedPath(fields))
        #expect(TokenFieldGroup.grouping(fields).count == count)
        fields.append(TokenField(path: "p\(count / 2)", value: "again"))
        #expect(TokenFieldGroup.hasRepeatedPath(fields))
        #expect(TokenFieldGroup.grouping(fields)[count / 2].values == ["", "again"])
    }
}
