import EntitlementTokens
import Testing
import TokenTestSupport

@testable import CDNTokens

/// The MPD's XML scanner (docs/DESIGN.md#the-mpd-reader): no DTD and no
/// entity but XML's five, well-formed or refused, bounded, and the raw
/// bytes of every value located.
@Suite("DASH MPD scanner")
struct DASHMPDScannerTests {
    /// Every token of `text`, or the error.
    static func scan(_ text: String, limits: MPDScanLimits = .standard) throws(ManifestError) -> [MPDToken] {
        var scanner = try MPDScanner(Array(text.utf8), limits: limits)
        var tokens: [MPDToken] = []
        while let token = try scanner.next() { tokens.append(token) }
        return tokens
    }

    static func refused(_ text: String, limits: MPDScanLimits = .standard) -> ManifestError? {
        do {
            _ = try scan(text, limits: limits)
            return nil
        } catch {
            return error
        }
    }

    static let billionLaughs = """
        <?xml version="1.0"?>
        <!DOCTYPE lolz [
         <!ENTITY lol "lol">
         <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
         <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
        ]>
        <MPD xmlns="urn:mpeg:dash:schema:mpd:2011"><BaseURL>&lol3;</BaseURL></MPD>
        """
    static let xxe = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE MPD [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
        <MPD xmlns="urn:mpeg:dash:schema:mpd:2011"><BaseURL>&xxe;</BaseURL></MPD>
        """

    static let malformed: [(String, String)] = [
        ("billion laughs", billionLaughs),
        ("XXE with SYSTEM", xxe),
        ("a DOCTYPE without a subset", "<!DOCTYPE MPD><MPD/>"),
        ("an entity declaration outside a DTD", "<MPD><!ENTITY x \"y\"></MPD>"),
        ("an undeclared entity", "<MPD a=\"&xxe;\"/>"),
        ("an unbalanced tag", "<MPD><Period></MPD>"),
        ("an unclosed root", "<MPD><Period/>"),
        ("a stray end tag", "<MPD/></Period>"),
        ("a duplicate attribute", "<MPD type=\"static\" type=\"dynamic\"/>"),
        ("a duplicate attribute under two prefixes", "<MPD xmlns:a=\"urn:x\" xmlns:b=\"urn:x\" a:t=\"1\" b:t=\"2\"/>"),
        ("two roots", "<MPD/><MPD/>"),
        ("text outside the root", "<MPD/>x"),
        ("no root", "<!-- only a comment -->"),
        ("an undeclared prefix", "<x:MPD/>"),
        ("'<' in an attribute", "<MPD a=\"<\"/>"),
        ("an unquoted attribute", "<MPD a=b/>"),
        ("'--' in a comment", "<MPD><!-- a -- b --></MPD>"),
        ("a bare '&'", "<MPD>a & b</MPD>"),
        ("a character reference to NUL", "<MPD>&#0;</MPD>"),
        ("a character reference beyond Unicode", "<MPD>&#x110000;</MPD>"),
        ("a control byte", "<MPD>\u{1}</MPD>"),
        ("']]>' in text", "<MPD>]]></MPD>"),
        ("a late XML declaration", "<MPD><?xml version=\"1.0\"?></MPD>"),
        ("an encoding other than UTF-8", "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><MPD/>"),
        ("XML 1.1", "<?xml version=\"1.1\"?><MPD/>"),
        ("attributes without a space", "<MPD a=\"1\"b=\"2\"/>"),
        ("a name with two colons", "<a:b:c/>"),
    ]

    @Test("malformed XML and every DTD are refused, with an offset inside the input", arguments: malformed.map(\.0))
    func refusals(_ name: String) {
        let text = Self.malformed.first { $0.0 == name }!.1
        let error = Self.refused(text)
        #expect(error != nil, "\(name) was read")
        if let offset = error?.offset { #expect(offset >= 0 && offset <= text.utf8.count) }
    }

    @Test("the DTD is refused before any entity could be read, and so is the manifest")
    func dtdRefusedByTheReader() {
        for text in [Self.billionLaughs, Self.xxe] {
            #expect(throws: ManifestError.self) {
                try ParsedManifest.read(Array(text.utf8), url: DASHManifestOracle().url, scope: DASHManifestOracle().scope)
            }
        }
        #expect(Self.refused(Self.xxe)?.reason.contains("DTD") == true)
    }

    @Test("bytes that are not UTF-8 are refused")
    func notUTF8() throws {
        #expect(throws: ManifestError.self) { try MPDScanner([0x3C, 0x4D, 0xFF, 0x3E]) }
    }

    @Test("depth, attribute count, value length and name length are bounded")
    func limits() {
        let deep = String(repeating: "<a>", count: 65) + String(repeating: "</a>", count: 65)
        #expect(Self.refused(deep) != nil)
        let shallow = String(repeating: "<a>", count: 64) + String(repeating: "</a>", count: 64)
        #expect(Self.refused(shallow) == nil)
        let wide = "<MPD " + (0..<257).map { "a\($0)=\"\"" }.joined(separator: " ") + "/>"
        #expect(Self.refused(wide) != nil)
        #expect(Self.refused("<MPD a=\"" + String(repeating: "x", count: 64 * 1024 + 1) + "\"/>") != nil)
        #expect(Self.refused("<MPD>" + String(repeating: "x", count: 64 * 1024 + 1) + "</MPD>") != nil)
        #expect(Self.refused("<" + String(repeating: "m", count: 257) + "/>") != nil)
        var tight = MPDScanLimits()
        tight.maximumDepth = 2
        #expect(Self.refused("<a><b><c/></b></a>", limits: tight) != nil)
    }

    @Test("values are decoded, their raw bytes located; namespaces resolved to local names")
    func values() throws {
        let text =
            "<?xml version='1.0' encoding='utf-8' standalone='yes'?>\n<?xml-stylesheet href='s.xsl'?><!-- c -->"
            + "<d:MPD xmlns:d=\"urn:mpeg:dash:schema:mpd:2011\" a=\"x&amp;y&#x41;&#66;\tz\" b='\"'><d:BaseURL>p&lt;q</d:BaseURL><![CDATA[<kept>]]></d:MPD>"
        let bytes = Array(text.utf8)
        var scanner = try MPDScanner(bytes)
        var sawPI = false
        var sawComment = false
        var texts: [String] = []
        var names: [String] = []
        while let token = try scanner.next() {
            switch token {
            case .startElement:
                names.append(scanner.element.localName)
                #expect(scanner.element.isDASH)
                if scanner.element.localName == "MPD" {
                    let a = try #require(scanner.attributes.first { $0.name.localName == "a" })
                    #expect(try scanner.value(of: a) == "x&yAB z")
                    #expect(String(decoding: bytes[a.valueRange], as: UTF8.self) == "x&amp;y&#x41;&#66;\tz")
                    let b = try #require(scanner.attributes.first { $0.name.localName == "b" })
                    #expect(try scanner.value(of: b) == "\"")
                    #expect(b.quote == UInt8(ascii: "'"))
                }
            case .text(let range): texts.append(try scanner.text(in: range))
            case .processingInstruction: sawPI = true
            case .comment: sawComment = true
            case .cdata(let range): #expect(String(decoding: bytes[range], as: UTF8.self) == "<kept>")
            case .endElement: break
            }
        }
        #expect(names == ["MPD", "BaseURL"])
        #expect(texts.contains("p<q"))
        #expect(sawPI && sawComment)
    }

    @Test("the scanner never traps on any prefix of a real MPD, or on it with one byte changed")
    func neverTraps() throws {
        let file = try DASHManifestReaderTests.fixture("baseurl-chain.mpd")
        for end in stride(from: 0, through: file.count, by: 7) { _ = Self.refused(String(decoding: file[..<end], as: UTF8.self)) }
        var generator = SeededGenerator(seed: 7)
        for _ in 0..<500 {
            var copy = file
            copy[Int.random(in: 0..<copy.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            DASHManifestReaderTests.oracle.check(copy)
        }
    }
}
