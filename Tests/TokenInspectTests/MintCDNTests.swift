import CDNTokens
import Foundation
import Testing

/// `tokeninspect mint cdn`: what the gate's exchange would hand out, from the
/// same profile file, one item a line (docs/CDN.md#checking-a-set-up).
@Suite struct MintCDNTests {
    static let key = "52a152a152a152a152a152a152a152a1"

    /// A folder with an Akamai profile and its key; removed by the caller.
    static func profile(_ extra: String = "") throws -> (directory: URL, path: String) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("mint-cdn-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data((key + "\n").utf8).write(to: directory.appendingPathComponent("edge.key"))
        let path = directory.appendingPathComponent("edge.profile").path
        try Data(
            """
            name = edge
            kind = akamai
            # relative: read under $CREDENTIALS_DIRECTORY
            key = edge.key
            resource = TNT https://media.example.com/hls/tnt/master.m3u8
            lifetime = 600
            \(extra)
            """.utf8
        ).write(to: URL(fileURLWithPath: path))
        return (directory, path)
    }

    @Test func printsTheURLAndTheCookieTheGateWouldHandOut() throws {
        let (directory, path) = try Self.profile()
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try CLI.run(
            ["mint", "cdn", "--profile", path, "--resource", "TNT", "--now", "1768478400"],
            environment: ["CREDENTIALS_DIRECTORY": directory.path]
        )
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 2)
        #expect(lines.first == "https://media.example.com/hls/tnt/master.m3u8")
        let cookie = try #require(lines.last)
        #expect(cookie.hasPrefix("Set-Cookie: __token__=st=1768478370~exp=1768479000~acl=/hls/tnt/*~hmac="), "\(cookie)")
        #expect(cookie.hasSuffix("; Domain=media.example.com; Path=/hls/tnt/; Max-Age=600; Secure; HttpOnly; SameSite=Lax"), "\(cookie)")
        // The printed token verifies with the profile's key for a segment of the folder, and not for another channel.
        let value = String(cookie.dropFirst("Set-Cookie: __token__=".count).prefix { $0 != ";" })
        let token = try EdgeAuthToken(parsing: value)
        try token.verify(
            key: EdgeAuthKey(hex: Self.key),
            facts: CDNRequestFacts(url: CDNURL(parsing: "https://media.example.com/hls/tnt/seg-1.ts"), now: 1_768_478_500)
        )
        #expect(throws: CDNRefusal.self) {
            try token.verify(
                key: EdgeAuthKey(hex: Self.key),
                facts: CDNRequestFacts(url: CDNURL(parsing: "https://media.example.com/hls/cnn/seg-1.ts"), now: 1_768_478_500)
            )
        }
    }

    @Test func aProfileThatCannotBeUsedExits2NamingItsLine() throws {
        let (directory, path) = try Self.profile("scope = everywhere\u{1B}[2J")
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try CLI.run(["mint", "cdn", "--profile", path, "--resource", "TNT"], environment: ["CREDENTIALS_DIRECTORY": directory.path])
        #expect(result.status == 2)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.contains("edge.profile:7: the value of scope holds a control character"), "\(result.stderr)")
        #expect(!result.stderr.contains("\u{1B}"), "a terminal control reached stderr")

        let (other, otherPath) = try Self.profile()
        defer { try? FileManager.default.removeItem(at: other) }
        let unknown = try CLI.run(["mint", "cdn", "--profile", otherPath, "--resource", "HBO"], environment: ["CREDENTIALS_DIRECTORY": other.path])
        #expect(unknown.status == 2)
        #expect(unknown.stderr.contains("no URL for the resource HBO"), "\(unknown.stderr)")
        // Without $CREDENTIALS_DIRECTORY the relative key is looked for in the working directory, and the error says so.
        let missing = try CLI.run(["mint", "cdn", "--profile", otherPath, "--resource", "TNT"])
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("read from the working directory"), "\(missing.stderr)")
    }
}
