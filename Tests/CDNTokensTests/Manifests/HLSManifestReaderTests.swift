import Foundation
import Testing
import TokenTestSupport

@testable import CDNTokens

/// The URIs of an HLS playlist, found, resolved and rewritten
/// (docs/DESIGN.md#tokens-inside-manifests).
@Suite struct HLSManifestReaderTests {
    static let viewer = ManifestViewer(
        gateRoute: "/v1/manifest",
        session: "SESSION",
        token: [CDNField("md5", "AbC-_x"), CDNField("expires", "1767225600")]
    )

    static func read(_ text: String, url: String = "https://cdn.example.test/hls/tnt/index.m3u8") throws(ManifestError) -> ParsedManifest {
        let url = try! CDNURL(parsing: url)
        return try ParsedManifest.read(Array(text.utf8), url: url, scope: ManifestScope(resourceURL: url, tokenNames: ["md5", "expires"]))
    }

    static func rewritten(_ manifest: ParsedManifest) -> String { String(decoding: manifest.rewritten(for: viewer), as: UTF8.self) }

    static func fixture(_ name: String) throws -> String {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/manifests/\(name)")
        return try String(contentsOf: file, encoding: .utf8)
    }

    /// Each RFC 8216 section 8 example, read from the host its URIs name: the
    /// format, liveness, duration and counts, and the strip oracle on every link.
    static let examples: [(String, String, ManifestFormat, Bool, Double?, Int, Int, Int)] = [
        ("rfc8216-8.1-simple-media.m3u8", "http://media.example.com/index.m3u8", .hlsMedia, false, 21.021, 3, 0, 0),
        ("rfc8216-8.2-live-media.m3u8", "https://priv.example.com/index.m3u8", .hlsMedia, true, 23.891, 3, 0, 0),
        ("rfc8216-8.3-encrypted-media.m3u8", "http://media.example.com/index.m3u8", .hlsMedia, true, 46.166, 4, 0, 2),
        ("rfc8216-8.4-multivariant.m3u8", "http://example.com/master.m3u8", .hlsMultivariant, true, nil, 0, 4, 0),
        ("rfc8216-8.5-i-frames.m3u8", "https://cdn.example.test/hls/tnt/master.m3u8", .hlsMultivariant, true, nil, 0, 7, 0),
        ("rfc8216-8.6-audio-renditions.m3u8", "https://cdn.example.test/hls/tnt/master.m3u8", .hlsMultivariant, true, nil, 0, 7, 0),
        ("rfc8216-8.7-video-sources.m3u8", "https://cdn.example.test/hls/tnt/master.m3u8", .hlsMultivariant, true, nil, 0, 12, 0),
    ]

    @Test(arguments: examples)
    func rfc8216Examples(
        name: String,
        url: String,
        format: ManifestFormat,
        live: Bool,
        duration: Double?,
        tokenized: Int,
        routed: Int,
        foreign: Int
    ) throws {
        let manifest = try Self.read(Self.fixture(name), url: url)
        #expect(manifest.format == format)
        #expect(manifest.isLive == live)
        if let duration { #expect(abs((manifest.durationSeconds ?? 0) - duration) < 1e-9) } else { #expect(manifest.durationSeconds == nil) }
        #expect(manifest.counts.tokenized == tokenized)
        #expect(manifest.counts.routed == routed)
        #expect(manifest.counts.foreignHost == foreign)
        #expect(ManifestOracle.problem(in: manifest, viewer: Self.viewer) == nil)
    }

    @Test func simpleMediaPlaylistRewritten() throws {
        let manifest = try Self.read(Self.fixture("rfc8216-8.1-simple-media.m3u8"), url: "http://media.example.com/index.m3u8")
        #expect(
            Self.rewritten(manifest) == """
                #EXTM3U
                #EXT-X-TARGETDURATION:10
                #EXT-X-VERSION:3
                #EXTINF:9.009,
                http://media.example.com/first.ts?md5=AbC-_x&expires=1767225600
                #EXTINF:9.009,
                http://media.example.com/second.ts?md5=AbC-_x&expires=1767225600
                #EXTINF:3.003,
                http://media.example.com/third.ts?md5=AbC-_x&expires=1767225600
                #EXT-X-ENDLIST

                """
        )
    }

    @Test func everyURIOfAMultivariantPlaylist() throws {
        let manifest = try Self.read(
            """
            #EXTM3U
            #EXT-X-SESSION-DATA:DATA-ID="com.example.title",URI="title.json"
            #EXT-X-SESSION-KEY:METHOD=AES-128,URI="key.bin"
            #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="a",NAME="en",URI="audio/en.m3u8"
            #EXT-X-MEDIA:TYPE=CLOSED-CAPTIONS,GROUP-ID="cc",NAME="en",INSTREAM-ID="CC1"
            #EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=86000,URI="low/iframe.m3u8"
            #EXT-X-STREAM-INF:BANDWIDTH=1280000,AUDIO="a"
            low/v.m3u8

            """
        )
        #expect(
            Self.rewritten(manifest) == """
                #EXTM3U
                #EXT-X-SESSION-DATA:DATA-ID="com.example.title",URI="https://cdn.example.test/hls/tnt/title.json?md5=AbC-_x&expires=1767225600"
                #EXT-X-SESSION-KEY:METHOD=AES-128,URI="https://cdn.example.test/hls/tnt/key.bin?md5=AbC-_x&expires=1767225600"
                #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="a",NAME="en",URI="/v1/manifest/hls/tnt/audio/en.m3u8?tgs=SESSION"
                #EXT-X-MEDIA:TYPE=CLOSED-CAPTIONS,GROUP-ID="cc",NAME="en",INSTREAM-ID="CC1"
                #EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=86000,URI="/v1/manifest/hls/tnt/low/iframe.m3u8?tgs=SESSION"
                #EXT-X-STREAM-INF:BANDWIDTH=1280000,AUDIO="a"
                /v1/manifest/hls/tnt/low/v.m3u8?tgs=SESSION

                """
        )
        #expect(manifest.counts.tokenized == 2)
        #expect(manifest.counts.routed == 3)
    }

    @Test func everyURIOfAMediaPlaylist() throws {
        let manifest = try Self.read(
            """
            #EXTM3U\r
            #EXT-X-TARGETDURATION:4\r
            #EXT-X-KEY:METHOD=SAMPLE-AES,URI="skd://key-1",KEYFORMAT="com.apple.streamingkeydelivery"\r
            #EXT-X-KEY:METHOD=AES-128,URI="https://keys.example.test/k?id=1"\r
            #EXT-X-MAP:URI="init.mp4"\r
            #EXT-X-PART:DURATION=1.0,URI="part-1.0.m4s"\r
            #EXTINF:4.0,\r
            seg-1.m4s\r
            #EXT-X-PRELOAD-HINT:TYPE=PART,URI="part-2.0.m4s"\r
            #EXT-X-RENDITION-REPORT:URI="../tnt/low.m3u8",LAST-MSN=1\r
            # a comment, kept\r
            """
        )
        #expect(
            Self.rewritten(manifest) == """
                #EXTM3U\r
                #EXT-X-TARGETDURATION:4\r
                #EXT-X-KEY:METHOD=SAMPLE-AES,URI="skd://key-1",KEYFORMAT="com.apple.streamingkeydelivery"\r
                #EXT-X-KEY:METHOD=AES-128,URI="https://keys.example.test/k?id=1"\r
                #EXT-X-MAP:URI="https://cdn.example.test/hls/tnt/init.mp4?md5=AbC-_x&expires=1767225600"\r
                #EXT-X-PART:DURATION=1.0,URI="https://cdn.example.test/hls/tnt/part-1.0.m4s?md5=AbC-_x&expires=1767225600"\r
                #EXTINF:4.0,\r
                https://cdn.example.test/hls/tnt/seg-1.m4s?md5=AbC-_x&expires=1767225600\r
                #EXT-X-PRELOAD-HINT:TYPE=PART,URI="https://cdn.example.test/hls/tnt/part-2.0.m4s?md5=AbC-_x&expires=1767225600"\r
                #EXT-X-RENDITION-REPORT:URI="/v1/manifest/hls/tnt/low.m3u8?tgs=SESSION",LAST-MSN=1\r
                # a comment, kept\r
                """
        )
        #expect(manifest.counts.otherScheme == 1)
        #expect(manifest.counts.foreignHost == 1)
        #expect(manifest.counts.tokenized == 4)
        #expect(manifest.counts.routed == 1)
        #expect(manifest.isLive)
        #expect(manifest.format == .hlsMedia)
    }

    @Test func aURILineBeforeAnyTagIsASegment() throws {
        let manifest = try Self.read("#EXTM3U\nseg-0.ts\n#EXT-X-ENDLIST\n")
        #expect(manifest.counts.tokenized == 1)
        #expect(!manifest.isLive)
        #expect(manifest.durationSeconds == 0)
    }

    @Test func variablesAreSubstitutedBeforeResolving() throws {
        let manifest = try Self.read(
            """
            #EXTM3U
            #EXT-X-DEFINE:NAME="dir",VALUE="low"
            #EXT-X-DEFINE:QUERYPARAM="v"
            #EXT-X-MAP:URI="{$dir}/init.mp4?v={$v}"
            #EXTINF:2,
            {$dir}/seg-1.ts
            """,
            url: "https://cdn.example.test/hls/tnt/index.m3u8?v=7"
        )
        let text = Self.rewritten(manifest)
        #expect(text.contains("URI=\"https://cdn.example.test/hls/tnt/low/init.mp4?v=7&md5=AbC-_x&expires=1767225600\""))
        #expect(text.contains("\nhttps://cdn.example.test/hls/tnt/low/seg-1.ts?md5=AbC-_x&expires=1767225600"))
    }

    /// Each is a manifest the gate cannot read with certainty.
    static let unreadable: [String] = [
        "#EXTM3U\n#EXTINF:1,\n" + String(repeating: "a", count: 64 << 10 + 1) + "\n",
        "#EXTM3U\n#EXT-X-MAP:URI=\"init.mp4\",uri=\"x\"\n",
        "#EXTM3U\n#EXT-X-MAP:URI=\"init.mp4\",URI=\"other.mp4\"\n",
        "#EXTM3U\n#EXT-X-MAP:URI=\"init.mp4\n",
        "#EXTM3U\n#EXT-X-MAP:URI=init.mp4\n",
        "#EXTM3U\n#EXT-X-MAP:URI=\"init.mp4\"x\n",
        "#EXTM3U\n#EXT-X-MAP:URI=\"init.mp4\",\n",
        "#EXTM3U\n#EXT-X-MAP:URI=\"a\rb\"\n",
        "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1,,X=1\nv.m3u8\n",
        "#EXTM3U\n#EXT-X-CONTENT-STEERING:SERVER-URI=\"steer.json\"\n#EXT-X-STREAM-INF:BANDWIDTH=1\nv.m3u8\n",
        "#EXTM3U\n#EXTINF:2,\n{$missing}/seg.ts\n",
        "#EXTM3U\n#EXT-X-DEFINE:IMPORT=\"dir\"\n#EXTINF:2,\n{$dir}/seg.ts\n",
        "#EXTM3U\n#EXT-X-DEFINE:QUERYPARAM=\"absent\"\n",
        "#EXTM3U\n#EXT-X-DEFINE:NAME=\"a\",VALUE=\"1\"\n#EXT-X-DEFINE:NAME=\"a\",VALUE=\"2\"\n",
        "#EXTM3U\n#EXTINF:abc,\nseg.ts\n",
        "#EXTM3U\n#EXTINF:2,\nseg 1.ts\n",
        "#EXTM3U\n#EXTINF:2,\nseg.ts?md5=forged\n",
        "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\nv.m3u8?tgs=other\n",
        "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\n",
        "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\nv.m3u8\n#EXTINF:2,\nseg.ts\n",
        "#EXTM3UX\n",
        "#EXTM3U\n#EXTM3U\n",
    ]

    @Test(arguments: unreadable)
    func refusesWhatItCannotRead(_ text: String) {
        #expect(throws: ManifestError.self) { try Self.read(text) }
    }

    @Test func anErrorNamesItsLine() {
        do {
            _ = try Self.read("#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-MAP:URI=\"a\",URI=\"b\"\n")
            Issue.record("read")
        } catch {
            #expect(error.line == 3)
            #expect(error.description.hasPrefix("line 3: "))
        }
    }

    @Test func aReasonQuotingTheManifestIsEscaped() {
        do {
            _ = try Self.read("#EXTM3U\n#EXT-X-DEFINE:NAME=\"\u{1B}[2J\",VALUE=\"1\"\n")
            Issue.record("read")
        } catch {
            #expect(!error.reason.contains("\u{1B}"))
        }
    }
}
