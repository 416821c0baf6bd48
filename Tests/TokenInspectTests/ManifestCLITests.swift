import Foundation
import Testing

/// `tokeninspect manifest`: a saved playlist as the gate's manifest route
/// would rewrite it, with the profile's real token (docs/DESIGN.md#tokens-inside-manifests).
@Suite struct ManifestCLITests {
    static let secret = "8d1c2f6a9b3e4d5c6b7a8f9e0d1c2b3a4f5e6d7c8b9a0f1e2d3c4b5a69788796"

    /// A folder with a manifest-carrier secure_link profile, its secret and a playlist; removed by the caller.
    static func setUp(profileExtra: String = "", playlist: String) throws -> (directory: URL, profile: String, playlist: String) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("manifest-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data((secret + "\n").utf8).write(to: directory.appendingPathComponent("edge.secret"))
        let profile = directory.appendingPathComponent("edge.profile").path
        try Data(
            """
            name = edge
            kind = nginx-secure-link
            key = edge.secret
            resource = TNT https://edge.example.test/hls/tnt/master.m3u8
            carrier = manifest
            manifest-origin = http://origin.internal:8080/
            lifetime = 600
            secure-link-md5 = $secure_link_expires$folder $secret
            \(profileExtra)
            """.utf8
        ).write(to: URL(fileURLWithPath: profile))
        let path = directory.appendingPathComponent("index.m3u8").path
        try Data(playlist.utf8).write(to: URL(fileURLWithPath: path))
        return (directory, profile, path)
    }

    static let media = """
        #EXTM3U
        #EXT-X-TARGETDURATION:4
        #EXT-X-MAP:URI="init.mp4"
        #EXT-X-KEY:METHOD=SAMPLE-AES,URI="skd://key-1"
        #EXTINF:4.0,
        seg-1.m4s?v=2
        #EXTINF:3.5,
        https://ads.example.test/ad-1.ts
        #EXT-X-RENDITION-REPORT:URI="../tnt/low.m3u8",LAST-MSN=1
        #EXT-X-ENDLIST

        """

    @Test func rewritesAMediaPlaylistWithTheProfilesToken() throws {
        let (directory, profile, playlist) = try Self.setUp(playlist: Self.media)
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try CLI.run(
            ["manifest", "--profile", profile, "--url", "https://edge.example.test/hls/tnt/index.m3u8", "--now", "1768478400", playlist],
            environment: ["CREDENTIALS_DIRECTORY": directory.path]
        )
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        // VOD: 7.5 s rounded up, plus the profile's 600 s.
        let expires = 1_768_478_400 + 8 + 600
        #expect(lines.count == 11)
        #expect(lines[2].hasPrefix("#EXT-X-MAP:URI=\"https://edge.example.test/hls/tnt/init.mp4?md5="), "\(lines[2])")
        #expect(lines[2].hasSuffix("&expires=\(expires)\""), "\(lines[2])")
        #expect(lines[3] == "#EXT-X-KEY:METHOD=SAMPLE-AES,URI=\"skd://key-1\"")
        #expect(lines[5].hasPrefix("https://edge.example.test/hls/tnt/seg-1.m4s?v=2&md5="), "\(lines[5])")
        #expect(lines[7] == "https://ads.example.test/ad-1.ts")
        #expect(lines[8] == "#EXT-X-RENDITION-REPORT:URI=\"/v1/manifest/hls/tnt/low.m3u8?tgs=SESSION\",LAST-MSN=1")
        #expect(
            result.stderr
                == "manifest: HLS media playlist, VOD; 2 tokenized, 1 routed through the gate, 0 base URLs; "
                + "left alone: 1 other scheme, 1 other host, 0 other folder, 0 refused path\n"
        )
        // The token written is the one the edge checks: the reader verifies it with the same profile.
        let verified = try CLI.run(
            ["verify", "--profile", profile, "--url", lines[5], "--now", "1768478500", lines[5]],
            environment: ["CREDENTIALS_DIRECTORY": directory.path]
        )
        #expect(verified.status == 0, "\(verified.stdout) \(verified.stderr)")
    }

    @Test func aManifestItCannotReadExits2WithItsLine() throws {
        let (directory, profile, playlist) = try Self.setUp(playlist: "#EXTM3U\n#EXT-X-MAP:URI=\"a\",URI=\"b\"\n")
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try CLI.run(
            ["manifest", "--profile", profile, "--url", "https://edge.example.test/hls/tnt/index.m3u8", playlist],
            environment: ["CREDENTIALS_DIRECTORY": directory.path]
        )
        #expect(result.status == 2)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.contains("line 2: the attribute URI twice"), "\(result.stderr)")
    }

    @Test func aURLOutsideTheProfilesFoldersExits2() throws {
        let (directory, profile, playlist) = try Self.setUp(playlist: Self.media)
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try CLI.run(
            ["manifest", "--profile", profile, "--url", "https://edge.example.test/hls/cnn/index.m3u8", playlist],
            environment: ["CREDENTIALS_DIRECTORY": directory.path]
        )
        #expect(result.status == 2)
        #expect(result.stderr.contains("none of the profile's resources"), "\(result.stderr)")
    }

    @Test func unreadableKeysFailClearly() throws {
        let (directory, profile, playlist) = try Self.setUp(playlist: Self.media)
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.removeItem(at: directory.appendingPathComponent("edge.secret"))
        let result = try CLI.run(
            ["manifest", "--profile", profile, "--url", "https://edge.example.test/hls/tnt/index.m3u8", playlist],
            environment: ["CREDENTIALS_DIRECTORY": directory.path]
        )
        #expect(result.status == 2)
        #expect(result.stderr.contains("edge.secret"), "\(result.stderr)")
    }

    @Test func aManifestProfileNeedsAFolderScopeAndAnOrigin() throws {
        for (extra, message) in [
            ("scope = url", "carrier = manifest needs scope = folder"), ("manifest-max-bytes = 10", "manifest-max-bytes takes bytes"),
        ] {
            let (directory, profile, playlist) = try Self.setUp(profileExtra: extra, playlist: Self.media)
            defer { try? FileManager.default.removeItem(at: directory) }
            let result = try CLI.run(
                ["manifest", "--profile", profile, "--url", "https://edge.example.test/hls/tnt/index.m3u8", playlist],
                environment: ["CREDENTIALS_DIRECTORY": directory.path]
            )
            #expect(result.status == 2)
            #expect(result.stderr.contains(message), "\(result.stderr)")
        }
    }

    @Test func helpNamesTheCommand() throws {
        let result = try CLI.run(["manifest", "--help"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("--profile <FILE>"))
        #expect(result.stdout.contains("--url <URL>"))
    }

    /// Samples/README.md's manifest example is what the binary prints, line for line.
    @Test func theSamplesExampleIsWhatTheBinaryPrints() throws {
        let readme = try String(contentsOf: CLI.packageRoot.appendingPathComponent("Samples/README.md"), encoding: .utf8)
        let section = try #require(readme.components(separatedBy: "## Manifests for players that keep no cookies").last)
        let block = try #require(section.components(separatedBy: "```console\n").dropFirst().first?.components(separatedBy: "```").first)
        let shown = block.split(separator: "\n").dropFirst(2).map(String.init)
        let result = try CLI.run([
            "manifest", "--profile", "Samples/cdn/manifest.profile", "--now", "2026-01-15T12:03:00Z",
            "--url", "https://edge.example.test/live/tnt/720p/index.m3u8", "Samples/manifests/720p.m3u8",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let printed = result.stdout.split(separator: "\n").map(String.init) + result.stderr.split(separator: "\n").map(String.init)
        #expect(printed == shown)
    }
}
