import CDNTokens
import EntitlementTokens
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import GateTestSupport
@testable import TokenGate

/// `POST /v1/inspect` reads CDN pastes back (docs/DESIGN.md#reading-cdn-tokens-back): each kind
/// of `Samples/cdn` as support engineers paste it, answered with the library's report (the
/// object `tokeninspect --format json` prints), verified against the gate's own profiles.
struct CDNInspectTests {
    /// The members of the CLI's CDN report, in its order (``CDNReadingReport/json``).
    static let reportMembers = [
        "input", "source", "line", "status", "reason", "kind", "carrier", "tokenName", "url",
        "expiresAt", "notBefore", "fields", "cookieAttributes", "diagnostic", "verifiedWith", "renewalWindow",
    ]
    static let samples = GateFixtures.repository.appendingPathComponent("Samples/cdn")
    static let now = "2026-01-15T12:03:00Z"

    /// Each sample, the URL the edge was asked for (nil: the paste's own) and what it reads as.
    static let kinds: [(file: String, profile: String, url: String?, kind: String, carrier: String, tokenName: String?, profileName: String)] = [
        ("akamai-url.txt", "akamai.profile", nil, "akamai", "query", "__token__", "samples-akamai"),
        (
            "cloudfront-cookie.txt", "cloudfront.profile", "https://d111111abcdef8.cloudfront.net/hls/tnt/seg-1.ts", "cloudfront", "cookie", nil,
            "samples-cloudfront"
        ),
        ("cat-header.txt", "cat.profile", "https://cat.example.test/hls/tnt/seg-1.ts", "cat", "header", "CTA-Common-Access-Token", "samples-cat"),
        ("nginx-secure-link-set-cookie.txt", "nginx-secure-link.profile", nil, "nginx-secure-link", "set-cookie", "tg", "samples-nginx"),
    ]

    /// The samples' profiles with their key paths made absolute (they name keys from the repository root).
    static func sampleProfiles(in directory: URL) throws -> [String] {
        try kinds.map { kind in
            let text = try String(contentsOf: samples.appendingPathComponent(kind.profile), encoding: .utf8)
                .replacingOccurrences(of: "key = Samples/cdn/", with: "key = \(samples.path)/")
            let path = directory.appendingPathComponent(kind.profile).path
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            return path
        }
    }

    static func sample(_ file: String) throws -> String {
        try String(contentsOf: samples.appendingPathComponent(file), encoding: .utf8)
    }

    func inspect(_ client: some TestClientProtocol, _ query: String, _ body: String) async throws -> (TestResponse, [[String: Any]]) {
        let response = try await client.executeRequest(uri: "/v1/inspect" + query, method: .post, headers: [:], body: ByteBuffer(string: body))
        let array = (try? JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [[String: Any]]) ?? []
        return (response, array)
    }

    static func query(now: String = now, url: String?) -> String {
        "?now=\(now)" + (url.map { "&url=" + ($0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? $0) } ?? "")
    }

    @Test func eachKindIsReadAndVerifiedAgainstTheGatesProfiles() async throws {
        let directory = GateFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let runtime = try GateFixtures.runtime(try Self.sampleProfiles(in: directory).flatMap { ["--cdn-profile", $0] })
        try await runtime.application().test(.router) { client in
            for kind in Self.kinds {
                let (response, reports) = try await inspect(client, Self.query(url: kind.url), try Self.sample(kind.file))
                #expect(response.status == .ok, "\(kind.file)")
                #expect(response.headers[.contentType] == "application/json")
                try #require(reports.count == 1, "\(kind.file): \(String(buffer: response.body))")
                let report = reports[0]
                // The CLI's object, member for member, in its order.
                let body = String(buffer: response.body)
                let order = Self.reportMembers.compactMap { body.range(of: "\"\($0)\":")?.lowerBound }
                #expect(order.count == Self.reportMembers.count && order == order.sorted(), "\(kind.file): \(body)")
                #expect(Set(report.keys) == Set(Self.reportMembers), "\(kind.file)")
                #expect(report["status"] as? String == "VALID_TOKEN", "\(kind.file): \(report["reason"] ?? "")")
                #expect(report["kind"] as? String == kind.kind)
                #expect(report["carrier"] as? String == kind.carrier, "\(kind.file)")
                #expect(report["tokenName"] as? String == kind.tokenName, "\(kind.file)")
                #expect(report["verifiedWith"] as? String == "the profile \(kind.profileName)")
                #expect(report["expiresAt"] as? String == "2026-01-15T16:00:00Z", "\(kind.file)")
                #expect(report["source"] as? String == "body")
                #expect(((report["fields"] as? [String: String]) ?? [:]).count >= 2, "\(kind.file)")
                // Never a key: the answer names the profile only.
                for key in ["test-only-akamai.hex", "test-only-cat-hmac.hex", "test-only-secure-link.secret"] {
                    let secret = try String(contentsOf: Self.samples.appendingPathComponent(key), encoding: .utf8)
                        .trimmingCharacters(in: .whitespacesAndNewlines)
                    #expect(!body.contains(secret), "\(kind.file) echoes \(key)")
                }
            }
            // Each kind's own fields.
            let (_, akamai) = try await inspect(client, Self.query(url: nil), try Self.sample("akamai-url.txt"))
            #expect((akamai.first?["fields"] as? [String: String])?["acl"] == "/hls/tnt/*")
            let (_, cat) = try await inspect(client, Self.query(url: Self.kinds[2].url), try Self.sample("cat-header.txt"))
            let diagnostic = try #require(cat.first?["diagnostic"] as? String)
            #expect(diagnostic.contains("catu") && diagnostic.contains("\"/hls/tnt/\""), "\(diagnostic)")
            #expect((cat.first?["fields"] as? [String: String])?["iss"] == "TNT")
            let (_, secureLink) = try await inspect(client, Self.query(url: nil), try Self.sample("nginx-secure-link-set-cookie.txt"))
            #expect((secureLink.first?["cookieAttributes"] as? [String: String])?["tg_md5"]?.contains("Path=/hls/tnt/") == true)
        }
    }

    @Test func aRefusalSaysWhyInTheEdgesTerms() async throws {
        let directory = GateFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let runtime = try GateFixtures.runtime(try Self.sampleProfiles(in: directory).flatMap { ["--cdn-profile", $0] })
        try await runtime.application().test(.router) { client in
            let (_, elsewhere) = try await inspect(
                client,
                Self.query(url: "https://d111111abcdef8.cloudfront.net/hls/cnn/seg-1.ts"),
                try Self.sample("cloudfront-cookie.txt")
            )
            #expect(elsewhere.first?["status"] as? String == "URL_NOT_COVERED")
            #expect(elsewhere.first?["verifiedWith"] as? String == "the profile samples-cloudfront")
            let (_, late) = try await inspect(client, Self.query(now: "2026-01-15T17:00:00Z", url: nil), try Self.sample("akamai-url.txt"))
            #expect(late.first?["status"] as? String == "TOKEN_EXPIRED")
            // Signed with another key: no profile of the gate verifies it.
            let forged = try Self.sample("akamai-url.txt").replacingOccurrences(of: "hmac=4686", with: "hmac=0000")
            let (_, wrong) = try await inspect(client, Self.query(url: nil), forged)
            #expect(wrong.first?["status"] as? String == "INVALID_SIGNATURE")
            // Two tokens in one paste are one refusal naming both, never a pick.
            let (_, two) = try await inspect(
                client,
                Self.query(url: nil),
                try Self.sample("akamai-url.txt") + Self.sample("cat-header.txt")
            )
            #expect(two.count == 1 && two.first?["status"] as? String == "INVALID_TOKEN_FORMAT", "\(two)")
            // Several pastes, a blank line apart: one report each, in order.
            let (_, several) = try await inspect(
                client,
                Self.query(url: nil),
                try Self.sample("akamai-url.txt") + "\n" + Self.sample("nginx-secure-link-set-cookie.txt")
            )
            #expect(several.map { $0["kind"] as? String } == ["akamai", "nginx-secure-link"])
            #expect(several.map { $0["input"] as? Int } == [1, 2])
        }
    }

    /// A `url` whose path leaves the scope (a dot segment in any spelling, an encoded `/`) makes every paste
    /// `INVALID_URL`: the reader never resolves it, so it never calls such a URL covered.
    @Test func aURLThatLeavesTheScopeIsInvalidURLForEveryKind() async throws {
        let directory = GateFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let runtime = try GateFixtures.runtime(try Self.sampleProfiles(in: directory).flatMap { ["--cdn-profile", $0] })
        try await runtime.application().test(.router) { client in
            for kind in Self.kinds {
                for path in ["/hls/tnt/../cnn/seg-1.ts", "/hls/tnt/%2E%2E/cnn/seg-1.ts", "/hls/tnt/..;/cnn/seg-1.ts", "/hls/tnt/..%5Ccnn/seg-1.ts"] {
                    let (response, reports) = try await inspect(
                        client,
                        Self.query(url: "https://edge.example.test" + path),
                        try Self.sample(kind.file)
                    )
                    #expect(response.status == .ok, "\(kind.file) \(path)")
                    #expect(reports.first?["status"] as? String == "INVALID_URL", "\(kind.file) \(path): \(String(buffer: response.body))")
                }
            }
        }
    }

    /// A profile's own `token-name` is read as its edge reads it: the kinds' reader knows only their default names.
    @Test func aProfilesOwnTokenNameIsRead() async throws {
        let directory = GateFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let nginx = try Self.sampleProfiles(in: directory)[3]
        try Data((try String(contentsOfFile: nginx, encoding: .utf8) + "token-name = edge\n").utf8).write(to: URL(fileURLWithPath: nginx))
        let runtime = try GateFixtures.runtime(["--cdn-profile", nginx])
        let paste = try Self.sample("nginx-secure-link-set-cookie.txt").replacingOccurrences(of: "Set-Cookie: tg_", with: "Set-Cookie: edge_")
        try await runtime.application().test(.router) { client in
            let (_, reports) = try await inspect(client, Self.query(url: nil), paste)
            #expect(reports.first?["status"] as? String == "VALID_TOKEN", "\(reports)")
            #expect(reports.first?["tokenName"] as? String == "edge")
            #expect(reports.first?["verifiedWith"] as? String == "the profile samples-nginx")
        }
    }

    /// The debugger's route under `serve --debugger` reads the same pastes and judges them with the
    /// gate's profiles, the page's "now" deciding; the standalone debugger has none and decodes.
    @Test func theDebuggerReportsCDNPastesWithTheGatesProfiles() async throws {
        let directory = GateFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let runtime = try GateFixtures.runtime(["--debugger"] + (try Self.sampleProfiles(in: directory).flatMap { ["--cdn-profile", $0] }))
        let akamai = try Self.sample("akamai-url.txt")
        try await runtime.application().test(.router) { client in
            let response = try await client.executeRequest(
                uri: "/debugger/report?now=\(Self.now)",
                method: .post,
                headers: [:],
                body: ByteBuffer(string: akamai + "\n" + Self.sample("nginx-secure-link-set-cookie.txt"))
            )
            let object = try #require(try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any])
            let reports = try #require(object["reports"] as? [[String: Any]])
            #expect(reports.map { $0["status"] as? String } == ["VALID_TOKEN", "VALID_TOKEN"], "\(reports)")
            #expect(reports.map { $0["verifiedWith"] as? String } == ["the profile samples-akamai", "the profile samples-nginx"])
            #expect((object["encoded"] as? [String])?.first == akamai.trimmingCharacters(in: .newlines))
            #expect((object["errorXML"] as? [Any])?.count == 2)
            let late = try await client.executeRequest(
                uri: "/debugger/report?now=2026-01-15T17:00:00Z",
                method: .post,
                headers: [:],
                body: ByteBuffer(string: akamai)
            )
            let lateObject = try JSONSerialization.jsonObject(with: Data(buffer: late.body)) as? [String: Any]
            #expect((lateObject?["reports"] as? [[String: Any]])?.first?["status"] as? String == "TOKEN_EXPIRED")
            // The same token pasted on a URL whose path leaves its folder: INVALID_URL, never VALID_TOKEN.
            let escaping = akamai.replacingOccurrences(of: "/hls/tnt/", with: "/hls/tnt/%2e%2e/cnn/")
            #expect(escaping != akamai)
            let moved = try await client.executeRequest(
                uri: "/debugger/report?now=\(Self.now)",
                method: .post,
                headers: [:],
                body: ByteBuffer(string: escaping)
            )
            let movedObject = try JSONSerialization.jsonObject(with: Data(buffer: moved.body)) as? [String: Any]
            #expect((movedObject?["reports"] as? [[String: Any]])?.first?["status"] as? String == "INVALID_URL", "\(String(buffer: moved.body))")
        }
    }

    @Test func withoutAProfileOfItsKindATokenIsDecodedNotJudged() async throws {
        let runtime = try GateFixtures.runtime()
        try await runtime.application().test(.router) { client in
            for kind in Self.kinds {
                let (response, reports) = try await inspect(client, "", try Self.sample(kind.file))
                #expect(response.status == .ok)
                #expect(reports.first?["kind"] as? String == kind.kind)
                #expect(reports.first?["status"] is NSNull, "\(kind.file)")
                #expect(reports.first?["verifiedWith"] is NSNull)
                #expect((reports.first?["reason"] as? String)?.hasPrefix("decoded; not verified") == true)
            }
        }
    }

    @Test func hostileFieldsComeBackAsTheJSONStringsTheyAre() async throws {
        let hostile = "<img/src=x/onerror=window.__pwned=3>"
        let token = "exp=1768492800~acl=/hls/tnt/*~data=\(hostile)~hmac=" + String(repeating: "ab", count: 32)
        let runtime = try GateFixtures.runtime()
        try await runtime.application().test(.router) { client in
            let (response, reports) = try await inspect(client, "", token)
            #expect(response.headers[.contentType] == "application/json")
            #expect(reports.first?["kind"] as? String == "akamai")
            #expect((reports.first?["fields"] as? [String: String])?["data"] == hostile)
        }
    }

    @Test func theCDNParametersAreCheckedAndKept() async throws {
        let runtime = try GateFixtures.runtime()
        try await runtime.application().test(.router) { client in
            let akamai = try Self.sample("akamai-url.txt")
            let (badURL, _) = try await inspect(client, "?url=not-a-url", akamai)
            #expect(badURL.status == .badRequest)
            let (badIP, _) = try await inspect(client, "?client-ip=999.1.1.1", akamai)
            #expect(badIP.status == .badRequest)
            let (badNow, _) = try await inspect(client, "?now=yesterday", akamai)
            #expect(badNow.status == .badRequest)
            let (badKind, _) = try await inspect(client, "?kind=edgeauth", akamai)
            #expect(badKind.status == .badRequest)
            #expect(String(buffer: badKind.body).contains("nginx-secure-link"))
            // CDN parameters with entitlement tokens: refused, not ignored.
            let (notCDN, _) = try await inspect(client, "?url=https%3A%2F%2Fa.example%2Fx", GateFixtures.token())
            #expect(notCDN.status == .badRequest)
            #expect(String(buffer: notCDN.body).contains("url is for CDN tokens"))
            // kind= reads a bare token as that kind.
            let bare = "st=1768478370~exp=1768492800~acl=/hls/tnt/*~hmac=468687acabd42d9760a1a8a08108cb4dd8888f8058a478818de3e78fa7ebbbae"
            let (_, asked) = try await inspect(client, "?kind=akamai", bare)
            #expect(asked.first?["kind"] as? String == "akamai")
            let (_, wrongKind) = try await inspect(client, "?kind=cat", bare)
            #expect(wrongKind.first?["status"] as? String == "INVALID_TOKEN_FORMAT")
            let (badNowWithTokens, _) = try await inspect(client, "?now=yesterday", GateFixtures.token())
            #expect(badNowWithTokens.status == .badRequest)
            // Entitlement tokens are inspected as before.
            let (_, tokens) = try await inspect(client, "", GateFixtures.token())
            #expect(tokens.first?["kind"] as? String == "media")
        }
    }
}
