import EntitlementTokens
import Testing
import TokenTestSupport

@testable import CDNTokens

/// `CDNURL`'s second door, from a scheme, a host and a target (the gate's
/// origin check), reads as the first reads the joined text: the same URL or
/// the same refusal, for chosen and drawn parts; and the query without the
/// `cat` parameter is the URI the old reading by `Character` gave.
@Suite struct CDNURLPartsTests {
    static let hosts = [
        "edge.media.test", "EDGE.Media.Test:8443", "[::1]", "[::1]:443", "[::1]x", "h:0", "h:65536", "h:", "a@b", "origin.invalid",
        "h/x", "h?x", "", "h:80:80", "[v6", "é.test", "h_x", "h x",
    ]
    static let targets = [
        "/hls/tnt/seg-1.ts", "/hls/tnt/seg-1.ts?a=1&b=2", "/", "/?", "/a?#", "/a#b", "/hls/tnt/../cnn/x.ts", "/hls/%74nt/x.ts",
        "/a b", "/a\u{7F}", "/é", "/a?q=é", "/hls/tnt/%2e%2e/x", "//x", "/a?b?c", "/hls/tnt/x.ts?cat=1", "x", "", "?a",
        "/" + String(repeating: "a", count: CDNURL.maximumLength),
    ]

    /// The two doors agree: both read the same URL, or both refuse, with the same words.
    static func expectSameReading(scheme: String, host: String, target: String, scopePath: String? = nil) {
        let joined = Result { () throws(CDNRefusal) -> CDNURL in try CDNURL(parsing: "\(scheme)://\(host)\(target)") }
        let parts = Result { () throws(CDNRefusal) -> CDNURL in
            try CDNURL(scheme: scheme, host: host, target: target[...], scopePath: scopePath)
        }
        switch (joined, parts) {
        case (.success(let a), .success(let b)): #expect(a == b, "\(scheme) \(host) \(target)")
        case (.failure(let a), .failure(let b)): #expect(a.reason == b.reason, "\(scheme) \(host) \(target)")
        default: Issue.record("\(scheme) \(host) \(target): \(joined) against \(parts)")
        }
    }

    @Test func chosenPartsReadAsTheJoinedText() {
        for scheme in ["https", "http", "HTTPS", "ftp"] {
            for host in Self.hosts {
                for target in Self.targets { Self.expectSameReading(scheme: scheme, host: host, target: target) }
            }
        }
    }

    @Test func aPathReadBeforeIsThePathReadHere() throws {
        for target in Self.targets {
            let path = target.prefix { $0 != "?" && $0 != "#" }
            guard let scopePath = try? RequestPath.read(path.utf8) else { continue }
            Self.expectSameReading(scheme: "https", host: "edge.media.test", target: target, scopePath: scopePath)
        }
    }

    @Test func drawnPartsReadAsTheJoinedText() {
        var random = SeededGenerator(seed: 0xC0FF_EE15)
        let hostBytes = Array("aZ09-.:[]@/?_é ".unicodeScalars)
        let targetBytes = Array("/aZ.%2e5?&=#:@ ~\u{7F}é;".unicodeScalars)
        func draw(_ alphabet: [Unicode.Scalar], _ length: Int) -> String {
            var text = ""
            for _ in 0..<length { text.unicodeScalars.append(alphabet[random.below(alphabet.count)]) }
            return text
        }
        for _ in 0..<3000 {
            let host = draw(hostBytes, random.below(12))
            let target = (random.below(8) == 0 ? "" : "/") + draw(targetBytes, random.below(24))
            Self.expectSameReading(scheme: random.below(2) == 0 ? "https" : "http", host: host, target: target)
        }
    }

    /// The reading of 2026-12-02 and before, by `Character`: the reference the byte reading is held to.
    static func referenceWithout(_ name: String, _ uri: Substring) -> String {
        guard let mark = uri.firstIndex(of: "?") else { return String(uri) }
        let kept = uri[uri.index(after: mark)...].split(separator: "&", omittingEmptySubsequences: false).filter { pair in
            pair.prefix { $0 != "=" } != Substring(name)
        }
        return String(uri[..<mark]) + (kept.isEmpty ? "" : "?" + kept.joined(separator: "&"))
    }

    @Test func theQueryWithoutTheCATParameterIsTheOldReading() {
        let chosen = [
            "/a", "/a?", "/a?cat", "/a?cat=", "/a?cat=x", "/a?x=1&cat=2&y=3", "/a?cat=1&cat=2", "/a?&&", "/a?cats=1&ca=2&cat",
            "/a?x=cat&cat=x=y", "/a?é=1&cat=é", "/a?b?cat=1", "?cat=1", "",
        ]
        for uri in chosen {
            #expect(CATURIRestriction.uri(withoutParameter: "cat", of: uri[...]) == Self.referenceWithout("cat", uri[...]), "\(uri)")
        }
        var random = SeededGenerator(seed: 0x5EED_CA75)
        let alphabet = Array("/?&=catxé".unicodeScalars)
        for _ in 0..<3000 {
            var uri = ""
            for _ in 0..<random.below(30) { uri.unicodeScalars.append(alphabet[random.below(alphabet.count)]) }
            #expect(CATURIRestriction.uri(withoutParameter: "cat", of: uri[...]) == Self.referenceWithout("cat", uri[...]), "\(uri)")
        }
    }
}
