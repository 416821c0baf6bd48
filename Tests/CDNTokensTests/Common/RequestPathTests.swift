import EntitlementTokens
import Foundation
import Testing
import TokenTestSupport

@testable import CDNTokens

/// The one reading of a request path (docs/DESIGN.md#one-reading-of-a-path):
/// every spelling of a path that leaves `/hls/tnt/` is refused as
/// `INVALID_URL` by the reading itself, by `CDNURL`, and so by every matcher
/// and reader of every kind; the paths that stay inside are read as an edge
/// reads them and still covered.
@Suite struct RequestPathTests {
    typealias F = ReadingFixtures

    /// Each leaves `/hls/tnt/` for `/hls/cnn/` (or names a byte a server may read as a separator) at an origin that resolves it.
    static let escaping = [
        "/hls/tnt/../cnn/seg-1.ts", "/hls/tnt/%2e%2e/cnn/seg-1.ts", "/hls/tnt/%2E%2E/cnn/seg-1.ts", "/hls/tnt/.%2e/cnn/seg-1.ts",
        "/hls/tnt/%2E./cnn/seg-1.ts", "/hls/tnt/./../cnn/seg-1.ts", "/hls/tnt/..;/cnn/seg-1.ts", "/hls/tnt/..;jsessionid=1/cnn/seg-1.ts",
        "/hls/tnt/%2e%2e;x/cnn/seg-1.ts", "/hls/tnt/./seg-1.ts", "/hls/tnt/.;a/seg-1.ts", "/hls/tnt/..", "/hls/tnt/.",
        "/hls/tnt/..%2fcnn/seg-1.ts", "/hls/tnt/..%2Fcnn/seg-1.ts", "/hls/tnt/..%5ccnn/seg-1.ts", "/hls/tnt/..%5Ccnn/seg-1.ts",
        "/hls/tnt/..\\cnn/seg-1.ts", "/hls/tnt/%00/seg-1.ts", "/hls/tnt/%0a/seg-1.ts", "/hls/tnt/%7f/seg-1.ts",
        "/hls/tnt/seg-1.ts%", "/hls/tnt/seg-1.ts%2", "/hls/tnt/%zz/seg-1.ts",
    ]

    /// Paths that stay inside `/hls/tnt/`, and the reading every scope judges.
    static let inside: [(String, String)] = [
        ("/hls/tnt/seg-1.ts", "/hls/tnt/seg-1.ts"), ("/hls/%74nt/seg-1.ts", "/hls/tnt/seg-1.ts"),
        ("/hls/tnt/%2E%2E%2E.ts", "/hls/tnt/....ts"), ("/hls/tnt/..a/seg.ts", "/hls/tnt/..a/seg.ts"),
        ("/hls/tnt/a..b/%20x.ts", "/hls/tnt/a..b/%20x.ts"), ("/hls/tnt/.well-known/x", "/hls/tnt/.well-known/x"),
        ("/hls/tnt/..%3Bx/seg.ts", "/hls/tnt/..%3Bx/seg.ts"), ("/hls/tnt//seg.ts", "/hls/tnt//seg.ts"),
    ]

    @Test func everyEscapingSpellingIsRefusedByTheReadingAndByCDNURL() {
        for path in Self.escaping {
            #expect(throws: CDNRefusal.self, "\(path)") { try RequestPath.read(path.utf8) }
            do {
                _ = try CDNURL(parsing: "https://edge.example.test" + path)
                Issue.record("\(path) was read as a URL")
            } catch {
                #expect(error.status == .invalidURL, "\(path): \(error)")
                #expect(error.reason.contains("refused, never resolved"), "\(path): \(error.reason)")
            }
        }
    }

    @Test func pathsInsideAreReadWithUnreservedEscapesDecodedAndTheRestAsWritten() throws {
        for (path, reading) in Self.inside {
            #expect(try RequestPath.read(path.utf8) == reading, "\(path)")
            let url = try CDNURL(parsing: "https://edge.example.test" + path + "?a=%2e%2e")
            #expect(url.path == path, "the signed bytes stay as written")
            #expect(url.scopePath == reading)
            #expect(CDNScope.folder.covers(url, grantedFor: try CDNURL(parsing: F.url)), "\(path)")
        }
        // The query and the fragment are not the path.
        #expect(try RequestPath.read("/hls/tnt/a.ts?x=/../..#/..".utf8) == "/hls/tnt/a.ts")
    }

    /// Every kind's token, pasted with a URL or judged against `--url` that
    /// leaves its folder, is `INVALID_URL`; the same token on a URL inside is valid.
    @Test func everyKindAndEveryReaderAnswersInvalidURLForAnEscapingPath() throws {
        let cloudFront = try F.cloudFront()
        let secureLink = try F.secureLink()
        let tokens: [(CDNTokenKind, String, String)] = [
            (.akamai, "__token__=" + (try F.akamai()), try F.akamai()),
            (
                .cloudfront, String(cloudFront.signedURL.split(separator: "?", maxSplits: 1)[1]),
                "Cookie: " + cloudFront.cookies.map { "\($0.name)=\($0.value)" }.joined(separator: "; ")
            ),
            (.cat, "cat=" + (try F.cat()), "CTA-Common-Access-Token: " + (try F.cat())),
            (
                .nginxSecureLink, secureLink.queryString,
                "Cookie: " + (try secureLink.cookies()).map { "\($0.name)=\($0.value)" }.joined(separator: "; ")
            ),
        ]
        for (kind, query, pasted) in tokens {
            let keys = try F.keys(kind)
            let inside = try CDNReading(text: "https://edge.example.test/hls/tnt/seg-1.ts?" + query)
            let verdict = F.verdict(inside, keys, try F.facts(nil))
            #expect(verdict.0 == .validToken, "\(kind): \(verdict.1)")
            for path in Self.escaping {
                do {
                    _ = try CDNReading(text: "https://edge.example.test\(path)?\(query)")
                    Issue.record("\(kind): a paste on \(path) was read")
                } catch {
                    #expect(error.status == .invalidURL, "\(kind) \(path): \(error)")
                }
            }
            // The token alone is fine; the URL a reader is told to judge it against is what is refused.
            let reading = try CDNReading(text: pasted)
            #expect(F.verdict(reading, keys, try F.facts()).0 == .validToken, "\(kind)")
        }
    }

    @Test func aProfileURLIsWrittenInTheOneSpellingItIsJudgedBy() throws {
        let text = "name = p\nkind = akamai\nkey = k.hex\nresource = TNT https://edge.example.test/hls/%74nt/master.m3u8\n"
        #expect(throws: CDNProfileError.self) { try CDNProfileSettings(text: text, source: "p.profile") }
        let escaping = "name = p\nkind = akamai\nkey = k.hex\nresource = TNT https://edge.example.test/hls/tnt/../cnn/master.m3u8\n"
        #expect(throws: CDNProfileError.self) { try CDNProfileSettings(text: escaping, source: "p.profile") }
    }

    /// The FuzzRequestPath oracle over the table, and over random paths of the bytes that matter.
    @Test func theFuzzOracleHoldsOnTheTableAndRandomPaths() async {
        await #expect(processExitsWith: .success) {
            let oracle = RequestPathOracle()
            var generator = SeededGenerator(seed: 0x9A7_4)
            let alphabet = Array("/./..%2e%2E%2f%5C;a\\?#%00%7e%".utf8)
            var inputs = (RequestPathTests.escaping + RequestPathTests.inside.map(\.0)).map { Array($0.utf8) }
            for _ in 0..<2000 {
                inputs.append((0..<Int(generator.next() % 24)).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] })
            }
            for input in inputs { oracle.check(input) }
        }
    }

    /// The oracle's own RFC 3986 reading: the RFC's examples (§5.4) resolved against nothing but dot segments.
    @Test func theOraclesRemoveDotSegmentsIsTheRFCs() {
        let cases = [
            ("/a/b/c/./../../g", "/a/g"), ("mid/content=5/../6", "mid/6"), ("/a/b/../..", "/"), ("/./x", "/x"), ("/..", "/"),
            ("/a/b", "/a/b"), ("/a/..;x/b", "/a/..;x/b"),
        ]
        for (path, resolved) in cases {
            #expect(RequestPathOracle.removeDotSegments(Array(path.utf8)) == Array(resolved.utf8), "\(path)")
        }
    }
}
