import Testing
import TokenTestSupport

@testable import CDNTokens

/// A manifest read once and spliced per viewer (docs/DESIGN.md#tokens-inside-manifests).
@Suite struct ParsedManifestTests {
    static let url = try! CDNURL(parsing: "https://cdn.example.test/hls/tnt/index.m3u8")
    static let scope = ManifestScope(resourceURL: url, tokenNames: ["md5", "expires"])

    static func read(_ text: String, limits: ManifestLimits = ManifestLimits()) throws(ManifestError) -> ParsedManifest {
        try ParsedManifest.read(Array(text.utf8), url: url, scope: scope, limits: limits)
    }

    @Test func theLifetimeOfALivePlaylistIsTheProfiles() throws {
        let live = try Self.read("#EXTM3U\n#EXTINF:6,\nseg.ts\n")
        #expect(live.tokenLifetime(profileLifetime: 300, secondsUntilSessionEnd: 3600) == 300)
        #expect(live.tokenLifetime(profileLifetime: 300, secondsUntilSessionEnd: 100) == 100)
        #expect(live.tokenLifetime(profileLifetime: 300, secondsUntilSessionEnd: 0) == 1)
    }

    @Test func theLifetimeOfAVODPlaylistCoversItsDuration() throws {
        let vod = try Self.read("#EXTM3U\n#EXTINF:6.5,\na.ts\n#EXTINF:6,\nb.ts\n#EXT-X-ENDLIST\n")
        #expect(vod.durationSeconds == 12.5)
        #expect(vod.tokenLifetime(profileLifetime: 300, secondsUntilSessionEnd: 3600) == 313)
        #expect(vod.tokenLifetime(profileLifetime: 300, secondsUntilSessionEnd: 200) == 200)
    }

    @Test func aMultivariantPlaylistCountsAsLive() throws {
        let manifest = try Self.read("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\nv.m3u8\n#EXT-X-ENDLIST\n")
        #expect(manifest.isLive)
        #expect(manifest.tokenLifetime(profileLifetime: 300, secondsUntilSessionEnd: 3600) == 300)
    }

    @Test func limitsAreErrors() {
        #expect(throws: ManifestError.self) {
            try Self.read("#EXTM3U\n" + String(repeating: "#c\n", count: 400), limits: ManifestLimits(maximumBytes: 1024))
        }
        #expect(throws: ManifestError.self) {
            try Self.read("#EXTM3U\n" + String(repeating: "#EXTINF:1,\ns.ts\n", count: 11), limits: ManifestLimits(maximumLinks: 10))
        }
        #expect(throws: Never.self) {
            try Self.read("#EXTM3U\n" + String(repeating: "#EXTINF:1,\ns.ts\n", count: 10), limits: ManifestLimits(maximumLinks: 10))
        }
    }

    @Test func theFormatIsSniffed() {
        #expect(throws: ManifestError.self) { try Self.read("<html></html>") }
        do {
            _ = try Self.read("\u{FEFF}<?xml version=\"1.0\"?><MPD/>")
        } catch {
            // The DASH reader answers for itself; HLS is not tried.
            #expect(!error.reason.contains("EXTM3U"))
        }
    }

    @Test func viewersShareOneReading() throws {
        let manifest = try Self.read(
            "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\nv.m3u8\n#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"a\",NAME=\"x\",URI=\"a.m3u8\"\n"
        )
        for session in ["one", "two-_"] {
            let viewer = ManifestViewer(gateRoute: "/v1/manifest", session: session, token: [])
            let text = String(decoding: manifest.rewritten(for: viewer), as: UTF8.self)
            #expect(text.contains("/v1/manifest/hls/tnt/v.m3u8?tgs=\(session)\n"))
            #expect(ManifestOracle.problem(in: manifest, viewer: viewer) == nil)
        }
    }

    /// The fuzz target's oracle over a generated mix of every URI kind and spelling.
    @Test func stripOracleOverGeneratedPlaylists() {
        let references = [
            "a.ts", "../tnt/b.ts", "/hls/tnt/c.ts", "/hls/cnn/d.ts", "https://cdn.example.test/hls/tnt/e.ts?x=1#f", "https://other.test/f.ts",
            "skd://k", "data:,x", "%2e%2e/g.ts", "h%2Fi.ts", "j?k=1&l=2", "#frag", "", "//cdn.example.test/hls/tnt/m.ts",
        ]
        let oracle = ManifestOracle()
        var generator = SeededGenerator(seed: 8216)
        for _ in 0..<200 {
            var text = ""
            for _ in 0..<Int.random(in: 1...12, using: &generator) {
                let reference = references.randomElement(using: &generator)!
                switch Int.random(in: 0..<4, using: &generator) {
                case 0: text += "#EXTINF:2,\n\(reference)\n"
                case 1: text += "#EXT-X-MAP:URI=\"\(reference)\"\n"
                case 2: text += "#EXT-X-RENDITION-REPORT:URI=\"\(reference)\",LAST-MSN=1\n"
                default: text += "#EXT-X-KEY:METHOD=AES-128,URI=\"\(reference)\"\n"
                }
            }
            oracle.check(Array(text.utf8))
        }
    }
}
