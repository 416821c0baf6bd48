import EntitlementTokens
import Foundation
import Testing
import TokenTestSupport

@testable import CDNTokens

/// The MPD reader and rewriter (docs/DESIGN.md#the-mpd-reader): what each
/// URI of an MPD becomes for a viewer, on ffmpeg's own MPDs and on the shapes
/// other packagers write, and the strip oracle over all of them.
@Suite("DASH manifest reader")
struct DASHManifestReaderTests {
    static let oracle = DASHManifestOracle()
    static let url = oracle.url
    static let scope = oracle.scope
    static let viewer = ManifestViewer(gateRoute: "/v1/manifest", session: "SESSION", token: [CDNField("md5", "abc"), CDNField("expires", "100")])

    static func fixture(_ name: String) throws -> [UInt8] {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/manifests/\(name)")
        return Array(try Data(contentsOf: file))
    }

    static func read(_ text: String) throws(ManifestError) -> ParsedManifest {
        try ParsedManifest.read(Array(text.utf8), url: url, scope: scope)
    }

    static func rewritten(_ parsed: ParsedManifest, viewer: ManifestViewer = viewer) -> String {
        String(decoding: parsed.rewritten(for: viewer), as: UTF8.self)
    }

    static func mpd(_ body: String, attributes: String = "") -> String {
        "<?xml version=\"1.0\"?>\n<MPD xmlns=\"urn:mpeg:dash:schema:mpd:2011\" type=\"static\"\(attributes)>\(body)</MPD>"
    }

    static let fixtures = ["ffmpeg-vod.mpd", "ffmpeg-live.mpd", "baseurl-chain.mpd", "segment-list.mpd", "segment-base.mpd", "location-foreign.mpd"]

    @Test("ffmpeg's static MPD: the template and init segment absolute on the CDN with the token, identifiers kept")
    func ffmpegVOD() throws {
        let parsed = try ParsedManifest.read(Self.fixture("ffmpeg-vod.mpd"), url: Self.url, scope: Self.scope)
        #expect(parsed.format == .dash)
        #expect(!parsed.isLive)
        #expect(parsed.durationSeconds == 6)
        #expect(parsed.counts.tokenized == 4)
        #expect(parsed.counts.total == 4)
        let out = Self.rewritten(parsed)
        #expect(out.contains(#"initialization="https://cdn.example.com/dash/ch1/init-stream$RepresentationID$.m4s?md5=abc&amp;expires=100""#))
        #expect(out.contains(#"media="https://cdn.example.com/dash/ch1/chunk-stream$RepresentationID$-$Number%05d$.m4s?md5=abc&amp;expires=100""#))
        // Everything else byte for byte: removing the inserted text gives the original back.
        let original = String(decoding: try Self.fixture("ffmpeg-vod.mpd"), as: UTF8.self)
        #expect(
            out.replacingOccurrences(of: "https://cdn.example.com/dash/ch1/", with: "").replacingOccurrences(of: "?md5=abc&amp;expires=100", with: "")
                == original
        )
    }

    @Test("ffmpeg's dynamic MPD is live; its UTCTiming URL is not a URI the gate rewrites")
    func ffmpegLive() throws {
        let parsed = try ParsedManifest.read(Self.fixture("ffmpeg-live.mpd"), url: Self.url, scope: Self.scope)
        #expect(parsed.isLive)
        #expect(parsed.durationSeconds == nil)
        #expect(parsed.counts.tokenized == 2)
        #expect(Self.rewritten(parsed).contains(#"value="https://time.akamai.com/?iso""#))
    }

    @Test("a three-level BaseURL chain with '..': each BaseURL absolute on the CDN, each segment URI absolute through the chain")
    func baseURLChain() throws {
        let parsed = try ParsedManifest.read(Self.fixture("baseurl-chain.mpd"), url: Self.url, scope: Self.scope)
        #expect(parsed.durationSeconds == 86400 + 3600 + 120 + 3.5)
        #expect(parsed.counts.rebased == 4)
        #expect(parsed.counts.tokenized == 5)
        let out = Self.rewritten(parsed)
        #expect(out.contains("<BaseURL>https://cdn.example.com/dash/ch1/period0/</BaseURL>"))
        #expect(out.contains("<BaseURL>https://cdn.example.com/dash/ch1/period0/video/</BaseURL>"))
        #expect(out.contains("<BaseURL>https://cdn.example.com/dash/ch1/period0/hd/</BaseURL>"))
        #expect(
            out.contains(
                #"media="https://cdn.example.com/dash/ch1/period0/hd/$RepresentationID$/seg-$Number%05d$.m4s?v=1&amp;x=$Bandwidth$&amp;md5=abc&amp;expires=100""#
            )
        )
        #expect(out.contains(#"index="https://cdn.example.com/dash/ch1/period0/video/$RepresentationID$.sidx?md5=abc&amp;expires=100""#))
    }

    @Test("SegmentList: Initialization@sourceURL, SegmentURL@media and @index; '../' out of the folder is left as it resolved")
    func segmentList() throws {
        let parsed = try ParsedManifest.read(Self.fixture("segment-list.mpd"), url: Self.url, scope: Self.scope)
        #expect(parsed.counts.tokenized == 5)
        #expect(parsed.counts.otherFolder == 1)
        let out = Self.rewritten(parsed)
        #expect(out.contains(#"<Initialization sourceURL="https://cdn.example.com/dash/ch1/r0/init.mp4?md5=abc&amp;expires=100"/>"#))
        #expect(out.contains(#"media='https://cdn.example.com/dash/ch1/r0/2.m4s?md5=abc&amp;expires=100' index="#))
        #expect(out.contains(#"media="https://cdn.example.com/dash/ch1/r0/3.m4s?md5=abc&amp;expires=100""#))
        #expect(out.contains(#"<SegmentURL media="https://cdn.example.com/dash/other/4.m4s"/>"#))
    }

    @Test("SegmentBase: a BaseURL that is the media file itself gets the token; Initialization and RepresentationIndex too")
    func segmentBase() throws {
        let parsed = try ParsedManifest.read(Self.fixture("segment-base.mpd"), url: Self.url, scope: Self.scope)
        #expect(parsed.durationSeconds == 600)
        #expect(parsed.counts.tokenized == 4)
        #expect(parsed.counts.rebased == 0)
        let out = Self.rewritten(parsed)
        #expect(out.contains("<BaseURL>https://cdn.example.com/dash/ch1/video-1000k.mp4?md5=abc&amp;expires=100</BaseURL>"))
        #expect(out.contains(#"<RepresentationIndex sourceURL="https://cdn.example.com/dash/ch1/video-2000k.sidx?md5=abc&amp;expires=100"/>"#))
    }

    @Test("Location goes back through the gate with tgs; a foreign BaseURL and what resolves against it are left alone")
    func locationAndForeign() throws {
        let parsed = try ParsedManifest.read(Self.fixture("location-foreign.mpd"), url: Self.url, scope: Self.scope)
        #expect(parsed.isLive)
        #expect(parsed.counts.routed == 1)
        #expect(parsed.counts.tokenized == 2)
        #expect(parsed.counts.foreignHost == 3)
        let out = Self.rewritten(parsed)
        #expect(out.contains("<Location>/v1/manifest/dash/ch1/live.mpd?v=2&amp;tgs=SESSION</Location>"))
        #expect(out.contains("<BaseURL>https://ads.example.net/creative/</BaseURL>"))
        #expect(out.contains(#"media="https://ads.example.net/creative/ad-$Number$.m4s""#))
        #expect(!out.contains("ads.example.net/creative/ad-$Number$.m4s?"))
    }

    @Test("a token holding '&', quotes, '<' and '$' is escaped for XML, and its '$' doubled inside a template")
    func escaping() throws {
        let viewer = ManifestViewer(gateRoute: "/v1/manifest", session: "S", token: [CDNField("md5", "a&b\"c'<d$e")])
        let parsed = try Self.read(
            Self.mpd(
                #"<Period><AdaptationSet><Representation id="r"><SegmentList><SegmentURL media="s.m4s"/></SegmentList></Representation></AdaptationSet><AdaptationSet><Representation id="t"><SegmentTemplate media="$Number$.m4s"/></Representation></AdaptationSet></Period>"#
            )
        )
        let out = Self.rewritten(parsed, viewer: viewer)
        #expect(out.contains(#"media="https://cdn.example.com/dash/ch1/s.m4s?md5=a%26b%22c&apos;%3Cd$e""#))
        #expect(out.contains(#"media="https://cdn.example.com/dash/ch1/$Number$.m4s?md5=a%26b%22c&apos;%3Cd$$e""#))
    }

    @Test("UrlQueryInfo without useMPDUrlQuery is read and kept as written")
    func urlQueryInfoKept() throws {
        let text = Self.mpd(
            #"<Period><AdaptationSet><SupplementalProperty schemeIdUri="urn:mpeg:dash:urlparam:2014" xmlns:up="urn:mpeg:dash:schema:urlparam:2014"><up:UrlQueryInfo queryTemplate="$querypart$" queryString="a=1"/></SupplementalProperty><Representation id="r"><SegmentTemplate media="$Number$.m4s"/></Representation></AdaptationSet></Period>"#
        )
        let out = Self.rewritten(try Self.read(text))
        #expect(out.contains(#"<up:UrlQueryInfo queryTemplate="$querypart$" queryString="a=1"/>"#))
    }

    @Test("multiple BaseURLs at one level: each rewritten, the first is the segments' base")
    func multipleBaseURLs() throws {
        let parsed = try Self.read(
            Self.mpd(
                #"<BaseURL>a/</BaseURL><BaseURL>https://cdn2.example.com/b/</BaseURL><Period><AdaptationSet><Representation id="r"><SegmentTemplate media="$Number$.m4s"/></Representation></AdaptationSet></Period>"#
            )
        )
        let out = Self.rewritten(parsed)
        #expect(out.contains("<BaseURL>https://cdn.example.com/dash/ch1/a/</BaseURL><BaseURL>https://cdn2.example.com/b/</BaseURL>"))
        #expect(out.contains(#"media="https://cdn.example.com/dash/ch1/a/$Number$.m4s?md5=abc&amp;expires=100""#))
    }

    @Test("an MPD without the DASH namespace is read; whitespace around a BaseURL is kept around it")
    func noNamespaceAndWhitespace() throws {
        let parsed = try ParsedManifest.read(
            Array("<MPD><BaseURL>\n  x/\n</BaseURL><Period/></MPD>".utf8),
            url: Self.url,
            scope: Self.scope
        )
        #expect(Self.rewritten(parsed) == "<MPD><BaseURL>\n  https://cdn.example.com/dash/ch1/x/\n</BaseURL><Period/></MPD>")
    }

    static let unreadable: [(String, String)] = [
        ("an unknown template identifier", mpd(#"<Period><SegmentTemplate media="$Foo$.m4s"/></Period>"#)),
        ("an unpaired $", mpd(#"<Period><SegmentTemplate media="$Number.m4s"/></Period>"#)),
        ("a bad format tag", mpd(#"<Period><SegmentTemplate media="$Number%5x$.m4s"/></Period>"#)),
        ("a format tag on RepresentationID", mpd(#"<Period><SegmentTemplate media="$RepresentationID%05d$.m4s"/></Period>"#)),
        ("a BaseURL after a SegmentTemplate", mpd(#"<Period><SegmentTemplate media="a"/><BaseURL>x/</BaseURL></Period>"#)),
        (
            "a BaseURL beneath inherited segment URIs",
            mpd(
                #"<Period><AdaptationSet><SegmentTemplate media="$Number$"/><Representation><BaseURL>x/</BaseURL></Representation></AdaptationSet></Period>"#
            )
        ),
        ("xlink:href", mpd(#"<Period xmlns:xlink="http://www.w3.org/1999/xlink" xlink:href="remote.xml"/>"#)),
        ("PatchLocation", mpd("<PatchLocation>p.xml</PatchLocation>")),
        ("ContentSteering", mpd("<ContentSteering>s.json</ContentSteering>")),
        ("a comment inside a BaseURL", mpd("<BaseURL>a<!-- x -->b</BaseURL>")),
        ("CDATA inside a BaseURL", mpd("<BaseURL><![CDATA[a/]]></BaseURL>")),
        ("an element inside a BaseURL", mpd("<BaseURL><x/></BaseURL>")),
        ("an empty BaseURL", mpd("<BaseURL></BaseURL>")),
        ("a space inside a URI", mpd(#"<Period><SegmentTemplate media="a b"/></Period>"#)),
        ("a BaseURL out of place", mpd("<Period><SegmentList><BaseURL>x</BaseURL></SegmentList></Period>")),
        ("a DASH name in another namespace", mpd(#"<x:BaseURL xmlns:x="urn:other">a</x:BaseURL>"#)),
        ("a root that is not MPD", "<?xml version=\"1.0\"?><Foo/>"),
        ("an MPD type that is neither", mpd("", attributes: #" type="live""#).replacingOccurrences(of: #"type="static""#, with: "")),
        ("a duration in months", mpd("", attributes: #" mediaPresentationDuration="P1M""#)),
        ("a base holding $ under a template", mpd(#"<BaseURL>a$b/</BaseURL><Period><SegmentTemplate media="$Number$"/></Period>"#)),
        (
            "an unsafe Representation id",
            mpd(#"<Period><AdaptationSet><SegmentTemplate media="$RepresentationID$/x"/><Representation id=".."/></AdaptationSet></Period>"#)
        ),
        ("a token name already in the query", mpd(#"<Period><SegmentList><SegmentURL media="a.m4s?md5=x"/></SegmentList></Period>"#)),
        (
            "UrlQueryInfo@useMPDUrlQuery",
            mpd(
                #"<Period><AdaptationSet><EssentialProperty schemeIdUri="urn:mpeg:dash:urlparam:2014" xmlns:up="urn:mpeg:dash:schema:urlparam:2014"><up:UrlQueryInfo queryTemplate="$querypart$" useMPDUrlQuery="true"/></EssentialProperty></AdaptationSet></Period>"#
            )
        ),
        ("BaseURL@byteRange", mpd(#"<BaseURL byteRange="$base$?r=$first$">a/</BaseURL>"#)),
    ]

    @Test("what the reader cannot read with certainty is unreadable, located", arguments: unreadable.map(\.0))
    func refusals(_ name: String) throws {
        let text = Self.unreadable.first { $0.0 == name }!.1
        #expect(throws: ManifestError.self) { try Self.read(text) }
        do {
            _ = try Self.read(text)
        } catch {
            #expect(error.line != nil, "\(name): \(error)")
        }
    }

    @Test("the strip oracle holds over every fixture")
    func stripOracleOnFixtures() throws {
        for name in Self.fixtures { Self.oracle.check(try Self.fixture(name)) }
    }

    @Test("the strip oracle holds over random MPDs built from the reader's pieces")
    func stripOracleRandom() {
        var generator = SeededGenerator(seed: 2026_11_29)
        let bases = [
            "a/", "../b/", "/dash/ch1/c/", "https://cdn.example.com/dash/ch1/d/", "https://other.example/x/", "./", "e/../f/", "/dash/other/",
        ]
        let media = [
            "$Number$.m4s", "seg-$Number%05d$.m4s?q=1", "$RepresentationID$/$Time$.mp4#t", "../x/$Bandwidth$.m4s", "$$lit$$-$SubNumber%3d$", "data:x",
        ]
        let plain = ["s.m4s", "../s.m4s", "/dash/ch1/q.m4s?a=b&amp;c=d", "https://cdn.example.com:443/dash/ch1/p.m4s", "skd://key", "x/y/../z.m4s#f"]
        for _ in 0..<300 {
            var body = ""
            func base() -> String { Bool.random(using: &generator) ? "<BaseURL>\(bases.randomElement(using: &generator)!)</BaseURL>" : "" }
            body += base()
            if Bool.random(using: &generator) { body += "<Location>\(plain.randomElement(using: &generator)!)</Location>" }
            body += "<Period>" + base() + "<AdaptationSet>" + base()
            for index in 0..<Int.random(in: 1...3, using: &generator) {
                body += "<Representation id=\"r\(index)\">" + base()
                switch Int.random(in: 0..<3, using: &generator) {
                case 0:
                    body +=
                        "<SegmentTemplate media=\"\(media.randomElement(using: &generator)!)\" initialization=\"\(media.randomElement(using: &generator)!)\"/>"
                case 1:
                    body +=
                        "<SegmentList><Initialization sourceURL=\"\(plain.randomElement(using: &generator)!)\"/><SegmentURL media=\"\(plain.randomElement(using: &generator)!)\" index=\"\(plain.randomElement(using: &generator)!)\"/></SegmentList>"
                default:
                    body += "<SegmentBase><RepresentationIndex sourceURL=\"\(plain.randomElement(using: &generator)!)\"/></SegmentBase>"
                }
                body += "</Representation>"
            }
            body += "</AdaptationSet></Period>"
            Self.oracle.check(Array(Self.mpd(body).utf8))
        }
    }
}
