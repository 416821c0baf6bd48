import Testing
import TokenTestSupport

@testable import CDNTokens

/// Where a resolved URI lies, and how it is written for a viewer
/// (docs/DESIGN.md#tokens-inside-manifests).
@Suite struct ManifestLinkTests {
    static let url = try! CDNURL(parsing: "https://cdn.example.test/hls/tnt/index.m3u8")
    static let scope = ManifestScope(resourceURL: url, tokenNames: ["md5", "expires"])
    static let viewer = ManifestViewer(
        gateRoute: "/v1/manifest",
        session: "c2Vzc2lvbg",
        token: [CDNField("md5", "AbC-_x"), CDNField("expires", "1767225600")]
    )

    static func link(_ reference: String, _ role: ManifestLinkRole = .media, escaping: ManifestEscaping = .none) throws -> ManifestLink {
        try ManifestLink(reference: ManifestURI(parsing: reference.utf8), base: ManifestURI(url), role: role, scope: scope, escaping: escaping)
    }

    /// The reference, its classification, and how it is written for the viewer.
    static let media: [(String, ManifestClassification, String)] = [
        ("seg-1.ts", .inside, "https://cdn.example.test/hls/tnt/seg-1.ts?md5=AbC-_x&expires=1767225600"),
        ("sub/../seg-1.ts", .inside, "https://cdn.example.test/hls/tnt/seg-1.ts?md5=AbC-_x&expires=1767225600"),
        ("/hls/tnt/a/seg-1.ts", .inside, "https://cdn.example.test/hls/tnt/a/seg-1.ts?md5=AbC-_x&expires=1767225600"),
        ("https://CDN.example.test:443/hls/tnt/seg-1.ts", .inside, "https://cdn.example.test/hls/tnt/seg-1.ts?md5=AbC-_x&expires=1767225600"),
        ("x?a=1", .inside, "https://cdn.example.test/hls/tnt/x?a=1&md5=AbC-_x&expires=1767225600"),
        ("x?a=1#t=10", .inside, "https://cdn.example.test/hls/tnt/x?a=1&md5=AbC-_x&expires=1767225600#t=10"),
        ("x#t=10", .inside, "https://cdn.example.test/hls/tnt/x?md5=AbC-_x&expires=1767225600#t=10"),
        ("seg%2D1.ts", .inside, "https://cdn.example.test/hls/tnt/seg%2D1.ts?md5=AbC-_x&expires=1767225600"),
        ("../cnn/seg-1.ts", .otherFolder, "https://cdn.example.test/hls/cnn/seg-1.ts"),
        ("/hls/tnt2/seg-1.ts", .otherFolder, "https://cdn.example.test/hls/tnt2/seg-1.ts"),
        ("https://ads.example.test/hls/tnt/ad.ts", .foreignHost, "https://ads.example.test/hls/tnt/ad.ts"),
        ("http://cdn.example.test/hls/tnt/seg-1.ts", .foreignHost, "http://cdn.example.test/hls/tnt/seg-1.ts"),
        ("https://cdn.example.test:8443/hls/tnt/seg-1.ts", .foreignHost, "https://cdn.example.test:8443/hls/tnt/seg-1.ts"),
        ("https://user@cdn.example.test/hls/tnt/seg-1.ts", .foreignHost, "https://user@cdn.example.test/hls/tnt/seg-1.ts"),
        ("skd://key-id-1", .otherScheme, "skd://key-id-1"),
        ("data:text/plain;base64,SGk=", .otherScheme, "data:text/plain;base64,SGk="),
        ("%2e%2e/cnn/seg-1.ts", .refusedPath, "https://cdn.example.test/hls/tnt/%2e%2e/cnn/seg-1.ts"),
        ("a%2Fb.ts", .refusedPath, "https://cdn.example.test/hls/tnt/a%2Fb.ts"),
        ("a%00b.ts", .refusedPath, "https://cdn.example.test/hls/tnt/a%00b.ts"),
    ]

    @Test(arguments: media)
    func mediaURIs(reference: String, classification: ManifestClassification, written: String) throws {
        let link = try Self.link(reference)
        #expect(link.classification == classification)
        #expect(link.written(for: Self.viewer) == written)
        #expect(ManifestOracle.strip(written, link, scope: Self.scope, viewer: Self.viewer) == nil)
    }

    @Test func playlistURIsGoBackThroughTheGate() throws {
        #expect(try Self.link("low/v.m3u8", .playlist).written(for: Self.viewer) == "/v1/manifest/hls/tnt/low/v.m3u8?tgs=c2Vzc2lvbg")
        #expect(try Self.link("v.m3u8?a=1#x", .playlist).written(for: Self.viewer) == "/v1/manifest/hls/tnt/v.m3u8?a=1&tgs=c2Vzc2lvbg#x")
        #expect(try Self.link("https://ads.example.test/v.m3u8", .playlist).written(for: Self.viewer) == "https://ads.example.test/v.m3u8")
    }

    @Test func twoReadingsAtTheEdgeAreUnreadable() throws {
        #expect(throws: ManifestError.self) { try Self.link("seg.ts?md5=x") }
        #expect(throws: ManifestError.self) { try Self.link("seg.ts?a=1&expires=2") }
        #expect(throws: ManifestError.self) { try Self.link("v.m3u8?tgs=x", .playlist) }
        // Outside the scope nothing is added, so nothing clashes.
        #expect(try Self.link("https://ads.example.test/seg.ts?md5=x").classification == .foreignHost)
    }

    @Test func tokenValuesAreEscapedForAQuery() {
        let viewer = ManifestViewer(gateRoute: "/g", session: "s", token: [CDNField("t", "st=1~acl=/hls/*~a&b+c;d#e\"f\r\n%")])
        #expect(viewer.tokenQuery == "t=st=1~acl=/hls/*~a%26b%2Bc%3Bd%23e%22f%0D%0A%25")
    }

    @Test func xmlEscapingIsTheDASHWritersHook() throws {
        let link = try Self.link("x?a=1&b=2", escaping: .xml)
        #expect(link.written(for: Self.viewer) == "https://cdn.example.test/hls/tnt/x?a=1&amp;b=2&amp;md5=AbC-_x&amp;expires=1767225600")
    }

    @Test func aBaseURLIsMadeAbsoluteWithoutAToken() throws {
        #expect(try Self.link("video/", .base).written(for: Self.viewer) == "https://cdn.example.test/hls/tnt/video/")
    }
}
