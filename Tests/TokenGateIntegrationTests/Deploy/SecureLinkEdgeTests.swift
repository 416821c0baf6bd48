import CDNTokens
import EntitlementTokens
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import GateTestSupport
@testable import TokenGate

/// A real nginx validates what the gate issues (docs/DESIGN.md#the-cdn-exchange):
/// the gate, in process with the shipped profiles (``ShippedEdge``), exchanges a
/// media token on `GET /v1/playback`, and the shipped edge
/// (`deploy/nginx/tokengate-edge.conf`, its `secure_link` module, its cache)
/// decides on the cookies or the link the 303 carries. nginx's clock is the
/// real one, so the gate's clock starts at the real time (and is set back
/// to make a token that nginx finds expired).
@Suite(
    .serialized,
    .enabled(
        if: Nginx.available,
        "nginx is not installed (apt-get install nginx-light); TOKENINSPECT_INTEGRATION=require makes this a failure"
    )
)
struct SecureLinkEdgeTests {
    static let files = [
        "hls/tnt/master.m3u8": "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:6\n#EXTINF:6.0,\nseg1.ts\n#EXTINF:6.0,\nseg2.ts\n#EXT-X-ENDLIST\n",
        "hls/tnt/seg1.ts": "tnt segment one",
        "hls/tnt/seg2.ts": "tnt segment two",
        "hls/cnn/master.m3u8": "#EXTM3U\n#EXTINF:6.0,\nseg1.ts\n",
        "hls/cnn/seg1.ts": "cnn segment one",
        "downloads/tnt/trailer.mp4": "the trailer",
        "downloads/tnt/extras.mp4": "the extras",
    ]

    struct Stack: Sendable {
        var port: Int
        var clock: GateFixtures.Clock
        var nginx: Nginx

        func get(_ target: String, cookies: [String: String] = [:]) async throws -> RawHTTP.Answer {
            let header = cookies.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "; ")
            return try await RawHTTP.fetch(port: port, target, headers: header.isEmpty ? [] : [("Cookie", header)])
        }

        var edgeLog: [String] { nginx.logLines("tokengate-edge.access.log") }
        var originLog: [String] { nginx.logLines("origin.log") }
    }

    /// A media token for TNT issued at the gate clock's time (media tokens live from their issue time).
    static func token(_ clock: GateFixtures.Clock, resource: String = "TNT") -> String {
        var request = GateFixtures.request(resource: resource)
        request.issueTime = clock.read()
        return GateFixtures.token(request)
    }

    /// The gate with both shipped profiles, and the shipped edge in front of nginx as the origin.
    func withStack(_ body: @Sendable (Stack, any TestClientProtocol) async throws -> Void) async throws {
        let directory = GateFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let port = try RawHTTP.freePort()
        let originPort = try RawHTTP.freePort()
        let edge = try ShippedEdge(
            port: port,
            origin: originPort,
            edge: "http://edge.media.test:\(port)",
            cookieDomain: "media.test",
            directory: directory
        )
        let clock = GateFixtures.Clock()
        clock.set(TokenTimestamp.now())
        let runtime = try GateFixtures.runtime(ShippedEdge.profileNames.flatMap { ["--cdn-profile", edge.profiles[$0]!] }, clock: clock)
        let nginx = try await offloaded { try Nginx(http: edge.http + ShippedEdge.origin(port: originPort), port: port, files: Self.files) }
        defer { nginx.stop() }
        try await runtime.application().test(.router) { client in
            try await body(Stack(port: port, clock: clock, nginx: nginx), client)
        }
    }

    /// `GET /v1/playback`: the 303's Location (on the edge, as a path) and the cookies it sets, by name.
    static func exchange(
        _ client: some TestClientProtocol,
        token: String,
        resource: String,
        profile: String,
        port: Int
    ) async throws -> (target: String, cookies: [String: String]) {
        let answer = try await client.executeRequest(
            uri: "/v1/playback?token=\(token)&resource=\(resource)&profile=\(profile)",
            method: .get,
            headers: [:],
            body: nil
        )
        #expect(answer.status == .seeOther, "\(answer.headers[.init("X-Token-Status")!] ?? "-"): \(String(buffer: answer.body))")
        let location = try #require(answer.headers[.location])
        let origin = "http://edge.media.test:\(port)"
        #expect(location.hasPrefix(origin + "/"), "\(location)")
        var cookies: [String: String] = [:]
        for line in answer.headers[values: .setCookie] {
            let pair = line.prefix { $0 != ";" }
            let equals = try #require(pair.firstIndex(of: "="))
            cookies[String(pair[..<equals])] = String(pair[pair.index(after: equals)...])
            #expect(line.contains("; Domain=media.test; Path=/hls/tnt/;"), "\(line)")
        }
        return (String(location.dropFirst(origin.count)), cookies)
    }

    @Test func theEdgePlaysAChannelOnTheGatesCookiesAndRefusesAnyOtherCookie() async throws {
        try await withStack { stack, client in
            let grant = try await Self.exchange(client, token: Self.token(stack.clock), resource: "TNT", profile: "nginx-edge", port: stack.port)
            #expect(grant.target == "/hls/tnt/master.m3u8")
            #expect(grant.cookies.keys.sorted() == ["tg_expires", "tg_md5"])

            // The playlist and every segment it names, on the cookies.
            let playlist = try await stack.get(grant.target, cookies: grant.cookies)
            #expect(playlist.status == 200, "\(stack.nginx.errorLog)")
            #expect(playlist.body == Self.files["hls/tnt/master.m3u8"])
            #expect(playlist["Cache-Control"] == nil, "an allowed answer is marked as a refusal")
            let segments = playlist.body.split(separator: "\n").filter { !$0.hasPrefix("#") }
            #expect(segments == ["seg1.ts", "seg2.ts"])
            for segment in segments {
                let answer = try await stack.get("/hls/tnt/\(segment)", cookies: grant.cookies)
                #expect(answer.status == 200, "\(segment)")
                #expect(answer.body == Self.files["hls/tnt/\(segment)"])
            }

            // Refused: no cookie, a tampered hash, an extended expiry (it is signed), another channel's folder.
            var tampered = grant.cookies
            let md5 = try #require(grant.cookies["tg_md5"])
            tampered["tg_md5"] = (md5.first == "A" ? "B" : "A") + md5.dropFirst()
            var extended = grant.cookies
            extended["tg_expires"] = String(Int64(try #require(grant.cookies["tg_expires"]))! + 3600)
            let refused: [(String, [String: String], String)] = [
                ("/hls/tnt/seg1.ts", [:], "no cookie"),
                ("/hls/tnt/seg1.ts", ["tg_md5": md5], "half the token"),
                ("/hls/tnt/seg1.ts", tampered, "a tampered md5"),
                ("/hls/tnt/seg1.ts", extended, "an extended expiry"),
                ("/hls/cnn/seg1.ts", grant.cookies, "another channel's folder"),
                ("/hls/cnn/master.m3u8", grant.cookies, "another channel's playlist"),
                ("/hls/tnt2/seg1.ts", grant.cookies, "a folder that only starts like the channel's"),
            ]
            for (target, cookies, what) in refused {
                let answer = try await stack.get(target, cookies: cookies)
                #expect(answer.status == 403, "\(what): \(answer.status)")
                #expect(answer["Cache-Control"] == "no-store", "\(what)")
                #expect(!answer.body.contains("segment"), "\(what)")
            }
            // A path another reader could take for another channel is refused before any check.
            let traversal = try await stack.get("/hls/tnt/..;/cnn/seg1.ts", cookies: grant.cookies)
            #expect(traversal.status == 400)

            // The origin never saw a token, and the edge's log holds none.
            #expect(stack.originLog.count == 3, "\(stack.originLog)")
            for line in stack.originLog { #expect(line.hasSuffix("cookie=\"-\""), "\(line)") }
            for line in stack.edgeLog { #expect(!line.contains(md5), "\(line)") }
        }
    }

    @Test func anExpiredTokenIs410AndTheCacheServesEveryViewerOnlyAfterTheCheck() async throws {
        try await withStack { stack, client in
            let first = try await Self.exchange(client, token: Self.token(stack.clock), resource: "TNT", profile: "nginx-edge", port: stack.port)
            let miss = try await stack.get("/hls/tnt/seg1.ts", cookies: first.cookies)
            #expect(miss.status == 200)
            #expect(miss["X-Cache-Status"] == "MISS")
            // Another viewer, another token (a second later: another expiry, another hash): the same cached copy.
            stack.clock.advance(1000)
            let second = try await Self.exchange(client, token: Self.token(stack.clock), resource: "TNT", profile: "nginx-edge", port: stack.port)
            #expect(second.cookies["tg_md5"] != first.cookies["tg_md5"])
            let hit = try await stack.get("/hls/tnt/seg1.ts?viewer=2", cookies: second.cookies)
            #expect(hit.status == 200)
            #expect(hit["X-Cache-Status"] == "HIT", "the token or the query is in the cache key")
            #expect(hit.body == Self.files["hls/tnt/seg1.ts"])
            // A cached segment is still checked.
            let uncookied = try await stack.get("/hls/tnt/seg1.ts")
            #expect(uncookied.status == 403)
            #expect(uncookied.body.contains("403"))

            // A token the gate issued a lifetime and a minute ago: genuine, and past its expiry.
            stack.clock.set(TokenTimestamp.now().adding(milliseconds: -(14_400 + 60) * 1000)!)
            let old = try await Self.exchange(client, token: Self.token(stack.clock), resource: "TNT", profile: "nginx-edge", port: stack.port)
            #expect(Int64(old.cookies["tg_expires"] ?? "") ?? .max < Int64(Date().timeIntervalSince1970))
            for target in ["/hls/tnt/master.m3u8", "/hls/tnt/seg1.ts"] {
                let expired = try await stack.get(target, cookies: old.cookies)
                #expect(expired.status == 410, "\(target)")
                #expect(expired["Cache-Control"] == "no-store", "a stored 410 would outlive the next token")
            }
            // An expired token for another folder is not "expired" but "not yours".
            let elsewhere = try await stack.get("/hls/cnn/seg1.ts", cookies: old.cookies)
            #expect(elsewhere.status == 403)
            #expect(stack.originLog.count == 1, "the origin was asked more than once: \(stack.originLog)")
            #expect(stack.edgeLog.filter { $0.contains("secure_link=\"0\"") }.count == 2, "\(stack.edgeLog)")
        }
    }

    @Test func aSingleFileOnTheQueryLink() async throws {
        try await withStack { stack, client in
            let grant = try await Self.exchange(
                client,
                token: Self.token(stack.clock, resource: "TNT-TRAILER"),
                resource: "TNT-TRAILER",
                profile: "nginx-edge-files",
                port: stack.port
            )
            #expect(grant.cookies.isEmpty)
            #expect(grant.target.hasPrefix("/downloads/tnt/trailer.mp4?md5="), "\(grant.target)")
            let file = try await stack.get(grant.target)
            #expect(file.status == 200, "\(stack.nginx.errorLog)")
            #expect(file.body == "the trailer")
            #expect(file["X-Cache-Status"] == "MISS")
            // Another viewer's link (a second later: another expiry, another md5): the same cached copy.
            stack.clock.advance(1000)
            let other = try await Self.exchange(
                client,
                token: Self.token(stack.clock, resource: "TNT-TRAILER"),
                resource: "TNT-TRAILER",
                profile: "nginx-edge-files",
                port: stack.port
            )
            #expect(other.target != grant.target)
            let hit = try await stack.get(other.target)
            #expect(hit.status == 200)
            #expect(hit["X-Cache-Status"] == "HIT", "the link's query is in the cache key")
            let query = String(grant.target.drop { $0 != "?" })
            let md5 = try #require(query.split(separator: "&").first { $0.hasPrefix("?md5=") }?.dropFirst(5))
            let tampered = query.replacingOccurrences(of: String(md5), with: (md5.first == "A" ? "B" : "A") + md5.dropFirst())
            let refused: [(String, String)] = [
                ("/downloads/tnt/trailer.mp4", "no link"),
                ("/downloads/tnt/trailer.mp4" + tampered, "a tampered md5"),
                ("/downloads/tnt/extras.mp4" + query, "the link of another file"),
            ]
            for (target, what) in refused {
                let answer = try await stack.get(target)
                #expect(answer.status == 403, "\(what): \(answer.status)")
                #expect(!answer.body.contains("trailer") && !answer.body.contains("extras"), "\(what)")
            }
            // The origin got the path without the link's query.
            #expect(stack.originLog == ["\"GET /downloads/tnt/trailer.mp4 HTTP/1.1\" cookie=\"-\""], "\(stack.originLog)")

            stack.clock.set(TokenTimestamp.now().adding(milliseconds: -(600 + 60) * 1000)!)
            let old = try await Self.exchange(
                client,
                token: Self.token(stack.clock, resource: "TNT-TRAILER"),
                resource: "TNT-TRAILER",
                profile: "nginx-edge-files",
                port: stack.port
            )
            let expired = try await stack.get(old.target)
            #expect(expired.status == 410)
        }
    }
}
