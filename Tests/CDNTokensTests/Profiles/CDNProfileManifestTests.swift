import Foundation
import Testing

@testable import CDNTokens

/// A manifest carrier's profile (docs/CDN.md#profiles): its settings, and the
/// token in a query it issues for a resource's folder.
@Suite struct CDNProfileManifestTests {
    static let akamai = """
        name = edge
        kind = akamai
        key = edge.key
        resource = TNT https://media.example.com/hls/tnt/master.m3u8
        carrier = manifest
        manifest-origin = http://origin.internal:8080/live/
        """

    static func profile(_ text: String, keys: [String: [UInt8]]) throws -> CDNProfile {
        try CDNProfile(
            settings: CDNProfileSettings(text: text, source: "edge.profile"),
            defaults: CDNProfileDefaults(lifetime: 600, leeway: 30)
        ) { path throws(CDNProfileError) in
            guard let bytes = keys[path] else { throw CDNProfileError("cannot read \(path)") }
            return bytes
        }
    }

    @Test func aManifestProfileReadsItsOriginAndBound() throws {
        let settings = try CDNProfileSettings(text: Self.akamai + "\nmanifest-max-bytes = 1048576", source: "p")
        #expect(settings.carrier == .manifest)
        #expect(settings.manifestOrigin?.description == "http://origin.internal:8080/live/")
        #expect(settings.manifestMaxBytes == 1 << 20)
        #expect(try CDNProfileSettings(text: Self.akamai, source: "p").manifestMaxBytes == CDNProfileSettings.defaultManifestMaxBytes)
    }

    @Test(arguments: [
        ("scope = url", "needs scope = folder"),
        ("manifest-max-bytes = 1023", "manifest-max-bytes takes bytes"),
        ("manifest-max-bytes = 67108865", "manifest-max-bytes takes bytes"),
    ])
    func aManifestProfileRefuses(line: String, expected: String) {
        do {
            _ = try CDNProfileSettings(text: Self.akamai + "\n" + line, source: "p")
            Issue.record("read")
        } catch {
            #expect(error.message.contains(expected), "\(error.message)")
        }
    }

    @Test func theOriginIsABaseURLWithoutAQuery() {
        let text = Self.akamai.replacingOccurrences(
            of: "manifest-origin = http://origin.internal:8080/live/",
            with: "manifest-origin = https://o.test/a?b=1"
        )
        #expect(throws: CDNProfileError.self) { try CDNProfileSettings(text: text, source: "p") }
        let ftp = Self.akamai.replacingOccurrences(of: "manifest-origin = http://origin.internal:8080/live/", with: "manifest-origin = ftp://o.test/")
        #expect(throws: CDNProfileError.self) { try CDNProfileSettings(text: ftp, source: "p") }
    }

    @Test func anAkamaiQueryTokenCoversTheFolder() throws {
        let profile = try Self.profile(Self.akamai, keys: ["edge.key": Array("52a152a152a152a152a152a152a152a1\n".utf8)])
        let token = try profile.queryToken(resource: "TNT", now: 1_768_478_400, lifetime: 900, clientIP: nil, requestor: nil)
        #expect(token.expires == 1_768_478_400 + 900)
        #expect(token.fields.map(\.name) == ["__token__"])
        #expect(token.fields[0].value.hasPrefix("st=1768478370~exp=1768479300~acl=/hls/tnt/*~hmac="), "\(token.fields[0].value)")
        #expect(profile.queryTokenNames == ["__token__"])
        // The exchange still issues for a manifest profile (its URL is the gate's to write).
        #expect(throws: Never.self) { try profile.issue(resource: "TNT", now: 1_768_478_400, clientIP: nil, requestor: nil) }
    }

    @Test func aSecureLinkQueryTokenIsMD5AndExpires() throws {
        let text = """
            name = edge
            kind = nginx-secure-link
            key = edge.secret
            resource = TNT https://media.example.com/hls/tnt/master.m3u8
            carrier = manifest
            manifest-origin = http://origin.internal/
            secure-link-md5 = $secure_link_expires$folder $secret
            """
        let profile = try Self.profile(text, keys: ["edge.secret": Array(String(repeating: "ab", count: 32).utf8)])
        let token = try profile.queryToken(resource: "TNT", now: 1_768_478_400, lifetime: 60, clientIP: nil, requestor: nil)
        #expect(token.fields.map(\.name) == ["md5", "expires"])
        #expect(token.fields[1].value == "1768478460")
        let uri = text.replacingOccurrences(of: "$folder", with: "$uri")
        #expect(throws: CDNProfileError.self) { try Self.profile(uri, keys: ["edge.secret": Array(String(repeating: "ab", count: 32).utf8)]) }
    }

    @Test func aCloudFrontQueryTokenIsACustomPolicyOnTheFolder() throws {
        let keyPath = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Samples/keys/test-rsa2048.pem").path
        let key = try [UInt8](Data(contentsOf: URL(fileURLWithPath: keyPath)))
        let text = """
            name = edge
            kind = cloudfront
            key = cf.pem K2JCJMDEHXQW5F
            resource = TNT https://d111111abcdef8.cloudfront.net/hls/tnt/master.m3u8
            carrier = manifest
            manifest-origin = https://origin.example.test/
            """
        let profile = try Self.profile(text, keys: ["cf.pem": key])
        let token = try profile.queryToken(resource: "TNT", now: 1_768_478_400, lifetime: 60, clientIP: nil, requestor: nil)
        #expect(token.fields.map(\.name) == ["Policy", "Signature", "Key-Pair-Id"])
        let policy = try CloudFrontBase64.decode(token.fields[0].value, field: "Policy")
        #expect(String(decoding: policy, as: UTF8.self).contains("\"Resource\":\"https://d111111abcdef8.cloudfront.net/hls/tnt/*\""))
    }
}
