import CDNTokens
import EntitlementTokens
import Foundation
import HummingbirdTesting
import IntegrationSupport
import Testing

@testable import GateTestSupport
@testable import TokenGate

/// Players that keep no cookies (docs/CDN.md, "Players that keep no
/// cookies"), end to end with real components only: ffmpeg's `hls` and
/// `dash` muxers make the streams, nginx serves them as the origin, the
/// shipped query edge (`deploy/nginx/tokengate-edge-query.conf`) checks a
/// `secure_link` token on every segment, and ffmpeg plays each stream
/// through the gate's manifest route, with no cookie and no header: the
/// tokens it carries are the ones the gate wrote into the manifests. The
/// player reaches the gate through the shipped nginx site
/// (`deploy/nginx/tokengate.conf`), whose name is the gate's `--public-url`.
/// The gate runs on the real clock, as nginx does.
@Suite(
    .serialized,
    .enabled(
        if: Nginx.available && FFmpeg.available,
        "nginx or ffmpeg is not installed (apt-get install nginx-light ffmpeg); TOKENINSPECT_INTEGRATION=require makes this a failure"
    ),
    // A stack that never comes up fails its test, never holds the run.
    .timeLimit(.minutes(5))
)
struct ManifestRouteTests {
    struct Stack: Sendable {
        /// The shipped site's port: the gate's public URL.
        var sitePort: Int
        var gatePort: Int
        var edgePort: Int
        var nginx: Nginx
        var profile: String
        var directory: URL

        var www: URL { nginx.prefix.appendingPathComponent("www") }
        var edgeLog: [String] { nginx.logLines("tokengate-edge-query.access.log") }
        var originLog: [String] { nginx.logLines("origin.log") }

        /// `GET /v1/playback` for `resource`: the 303's Location, on the gate.
        func exchange(_ resource: String) async throws -> String {
            var request = GateFixtures.request(resource: resource)
            request.issueTime = TokenTimestamp.now()
            let token = GateFixtures.token(request)
            let answer = try await RawHTTP.fetch(port: sitePort, "/v1/playback?token=\(token)&resource=\(resource)")
            guard answer.status == 303, let location = answer["Location"] else {
                throw RawHTTP.Failure(
                    description: "the exchange answered \(answer.status) \(answer.tokenStatus ?? "-"): \(answer.body)\n\(nginx.errorLog.suffix(2000))"
                )
            }
            return location
        }

        /// The gate's answer, through the site, for a URL on it (the Location or a nested playlist).
        func gate(_ url: String) async throws -> RawHTTP.Answer {
            let prefix = "http://127.0.0.1:\(sitePort)"
            let target = url.hasPrefix(prefix) ? String(url.dropFirst(prefix.count)) : url
            return try await RawHTTP.fetch(port: sitePort, target)
        }

        func edge(_ url: String) async throws -> RawHTTP.Answer {
            let prefix = "http://127.0.0.1:\(edgePort)"
            let target = url.hasPrefix(prefix) ? String(url.dropFirst(prefix.count)) : url
            return try await RawHTTP.fetch(port: edgePort, target)
        }

        /// The edge's log lines of requests for files under `folder`: (path, status, secure_link).
        /// ffmpeg asks for byte ranges: a served segment is 200 or 206.
        func edgeRequests(under folder: String) -> [(path: String, status: Int, secureLink: String)] {
            edgeLog.compactMap { line in
                guard let request = line.split(separator: "\"").dropFirst().first else { return nil }
                let words = request.split(separator: " ")
                guard words.count == 3, words[1].hasPrefix(folder) else { return nil }
                let after = line.split(separator: "\"").dropFirst(2).first?.split(separator: " ") ?? []
                let link = line.components(separatedBy: "secure_link=\"").dropFirst().first?.prefix { $0 != "\"" } ?? ""
                return (String(words[1]), Int(after.first ?? "") ?? 0, String(link))
            }
        }
    }

    /// The gate (in process, real clock) with the shipped manifest profile, the shipped query edge and nginx as the origin.
    func withStack(
        profileLines: [String] = [],
        replacing: [(String, String)] = [],
        sessionLifetime: Int = 3600,
        gateArguments: @Sendable (URL) throws -> [String] = { _ in [] },
        _ body: @Sendable (Stack) async throws -> Void
    ) async throws {
        let directory = GateFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let edgePort = try RawHTTP.freePort()
        let originPort = try RawHTTP.freePort()
        let sitePort = try RawHTTP.freePort()
        let edge = try ShippedQueryEdge(
            port: edgePort,
            origin: originPort,
            edge: "http://127.0.0.1:\(edgePort)",
            directory: directory,
            extra: profileLines.map { $0.replacingOccurrences(of: "EDGE", with: String(edgePort)) },
            replacing: replacing
        )
        let secret = directory.appendingPathComponent("session.secret")
        try Data("4f3c2b1a09f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a39281706f5e".utf8).write(to: secret)
        let configuration = try GateFixtures.configuration(
            [
                "--cdn-profile", edge.profile, "--session-secret", secret.path, "--session-lifetime", String(sessionLifetime),
                "--public-url", "http://127.0.0.1:\(sitePort)",
                // The gate runs in the test process, whose two cooperative threads
                // every parallel suite shares: the default 2 s to the origin's
                // whole answer can pass waiting for a thread. The deadline's own
                // test is OriginHTTPClientTests; nginx's read timeout here is 15 s.
                "--manifest-timeout", "10000",
            ] + gateArguments(directory)
        )
        let runtime = try GateRuntime(configuration: configuration, logger: LogCapture().logger, clock: TokenTimestamp.now)
        // The gate first, on a port the kernel gives it (a port picked free and
        // bound later can be taken meanwhile by another suite's connection);
        // nginx, which proxies to it, once it serves.
        let (ports, started) = AsyncStream<Int>.makeStream()
        let group = runtime.serviceGroup(port: 0) { channel in started.yield(channel.localAddress?.port ?? 0) }
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask {
                defer { started.finish() }
                try await group.run()
            }
            var iterator = ports.makeAsyncIterator()
            guard let gatePort = await iterator.next() else {
                try await tasks.waitForAll()
                throw RawHTTP.Failure(description: "the gate's service group ended before it served")
            }
            do {
                let site = try ShippedNginxSite(gate: gatePort, origin: originPort, port: sitePort, gateReadTimeout: "15s")
                let http = edge.http + ShippedEdge.origin(port: originPort) + site.http
                let nginx = try await offloaded { try Nginx(http: http, port: edgePort, configFiles: site.snippets) }
                defer { nginx.stop() }
                try await body(
                    Stack(sitePort: sitePort, gatePort: gatePort, edgePort: edgePort, nginx: nginx, profile: edge.profile, directory: directory)
                )
            } catch {
                await group.triggerGracefulShutdown()
                throw error
            }
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
    }

    /// Every URI line and `URI="…"` of a playlist.
    static func uris(ofPlaylist text: String) -> [String] {
        text.split(separator: "\n").flatMap { line -> [String] in
            if !line.hasPrefix("#") { return [String(line)] }
            guard let start = line.range(of: "URI=\"") else { return [] }
            return [String(line[start.upperBound...].prefix { $0 != "\"" })]
        }
    }

    @Test func aCookielessPlayerPlaysAMultivariantHLSStreamAndEverySegmentCarriesTheGatesToken() async throws {
        try await withStack { stack in
            try await FFmpeg.makeMultivariantTS(in: stack.www.appendingPathComponent("live/tnt"))
            let location = try await stack.exchange("TNT-LIVE")
            #expect(location.hasPrefix("http://127.0.0.1:\(stack.sitePort)/v1/manifest/live/tnt/master.m3u8?tgs="), "\(location)")

            // What the player reads: every playlist back through the gate, with the session.
            let master = try await stack.gate(location)
            #expect(master.status == 200, "\(master.tokenStatus ?? "-"): \(master.body)")
            #expect(master["Cache-Control"] == "private, no-store")
            let session = String(location.split(separator: "=", maxSplits: 1)[1])
            let nested = Self.uris(ofPlaylist: master.body)
            #expect(nested.count == 4, "\(master.body)")  // three variants and the audio rendition's URI
            for uri in nested {
                #expect(uri.hasPrefix("/v1/manifest/live/tnt/stream_"), "\(uri)")
                #expect(uri.hasSuffix("/index.m3u8?tgs=\(session)"), "\(uri)")
            }
            let media = try await stack.gate(nested[0])
            #expect(media.status == 200)
            let segments = Self.uris(ofPlaylist: media.body)
            #expect(segments.count >= 3, "\(media.body)")
            for segment in segments {
                #expect(segment.hasPrefix("http://127.0.0.1:\(stack.edgePort)/live/tnt/stream_"), "\(segment)")
                #expect(segment.contains(".ts?md5=") && segment.contains("&expires="), "\(segment)")
            }

            // The player: ffmpeg, every stream, to the end.
            let played = try await offloaded { try FFmpeg.play(location, in: stack.directory) }
            #expect(played.status == 0, "\(played.text)")
            let requests = stack.edgeRequests(under: "/live/tnt/")
            let files = try FileManager.default.subpathsOfDirectory(atPath: stack.www.appendingPathComponent("live/tnt").path)
                .filter { $0.hasSuffix(".ts") }
            #expect(requests.count >= 7, "\(stack.edgeLog)")
            for request in requests {
                #expect([200, 206].contains(request.status) && request.secureLink == "1", "\(request)")
                #expect(files.contains(String(request.path.dropFirst("/live/tnt/".count))), "\(request.path)")
            }
            // The edge never served a manifest: the origin's manifests went to the gate only.
            #expect(!stack.edgeLog.contains { $0.contains(".m3u8") })

            // The edge refuses a segment without the token, with another folder's, and an expired one.
            let genuine = segments[0]
            let path = String(genuine.split(separator: "?")[0])
            #expect(try await stack.edge(genuine).status == 200)
            #expect(try await stack.edge(path).status == 403)
            let query = String(genuine.split(separator: "?")[1])
            #expect(try await stack.edge("/live/tnt-dash/chunk-0-00001.m4s?" + query).status == 403)
            let profile = try CDNProfileSet.load(paths: [stack.profile], defaults: .init(lifetime: 3600, leeway: 0), credentialsDirectory: nil)
                .profile(named: "nginx-edge-manifest")!
            let expired = try profile.queryToken(
                resource: "TNT-LIVE",
                now: Int64(Date().timeIntervalSince1970) - 100,
                lifetime: 10,
                clientIP: nil,
                requestor: nil
            )
            let expiredQuery = expired.fields.map { "\($0.name)=\($0.value)" }.joined(separator: "&")
            #expect(try await stack.edge(path + "?" + expiredQuery).status == 410)
        }
    }

    @Test func fragmentedMP4WithItsInitSectionAndADASHStreamPlayThroughTheRoute() async throws {
        try await withStack(profileLines: ["resource = TNT-FMP4 http://127.0.0.1:EDGE/live/tnt-fmp4/index.m3u8"]) { stack in
            try await FFmpeg.makeFMP4(in: stack.www.appendingPathComponent("live/tnt-fmp4"))
            try await FFmpeg.makeDASH(in: stack.www.appendingPathComponent("live/tnt-dash"))
            let edge = "http://127.0.0.1:\(stack.edgePort)"

            let fmp4 = try await stack.exchange("TNT-FMP4")
            let playlist = try await stack.gate(fmp4)
            #expect(playlist.status == 200, "\(playlist.tokenStatus ?? "-"): \(playlist.body)")
            #expect(playlist.body.contains("#EXT-X-MAP:URI=\"\(edge)/live/tnt-fmp4/init.mp4?md5="), "\(playlist.body)")
            let playedFMP4 = try await offloaded { try FFmpeg.play(fmp4, in: stack.directory) }
            #expect(playedFMP4.status == 0, "\(playedFMP4.text)")
            let fmp4Requests = stack.edgeRequests(under: "/live/tnt-fmp4/")
            #expect(fmp4Requests.contains { $0.path == "/live/tnt-fmp4/init.mp4" }, "\(stack.edgeLog)")
            #expect(fmp4Requests.count >= 4, "\(stack.edgeLog)")
            for request in fmp4Requests { #expect([200, 206].contains(request.status) && request.secureLink == "1", "\(request)") }

            let dash = try await stack.exchange("TNT-DASH")
            #expect(dash.contains("/v1/manifest/live/tnt-dash/manifest.mpd?tgs="), "\(dash)")
            let mpd = try await stack.gate(dash)
            #expect(mpd.status == 200, "\(mpd.tokenStatus ?? "-"): \(mpd.body)")
            #expect(mpd["Content-Type"]?.hasPrefix("application/dash+xml") == true, "\(mpd["Content-Type"] ?? "-")")
            // The template's identifiers kept, the token after them, escaped for XML.
            #expect(mpd.body.contains("media=\"\(edge)/live/tnt-dash/chunk-$RepresentationID$-$Number%05d$.m4s?md5="), "\(mpd.body)")
            #expect(mpd.body.contains("&amp;expires="), "\(mpd.body)")
            let playedDASH = try await offloaded { try FFmpeg.play(dash, in: stack.directory) }
            #expect(playedDASH.status == 0, "\(playedDASH.text)")
            let dashRequests = stack.edgeRequests(under: "/live/tnt-dash/")
            #expect(dashRequests.filter { $0.path.contains("/init-") }.count >= 2, "\(stack.edgeLog)")
            #expect(dashRequests.filter { $0.path.contains("/chunk-") }.count >= 6, "\(stack.edgeLog)")
            // ffmpeg's DASH reader asks for one chunk past a representation's end
            // (its template's count comes from the duration): the edge let it
            // through on the token, and the origin has no such file (404).
            for request in dashRequests {
                #expect(request.secureLink == "1" && [200, 206, 404].contains(request.status), "\(request)")
            }
            #expect(dashRequests.filter { [200, 206].contains($0.status) }.count >= 8, "\(stack.edgeLog)")
        }
    }

    @Test func aLiveStreamPlaysOnPastTheTokensLifetimeAndStopsWhenTheSessionEnds() async throws {
        try await withStack(
            profileLines: [],
            replacing: [("lifetime = 300", "lifetime = 3")],
            sessionLifetime: 24
        ) { stack in
            let folder = stack.www.appendingPathComponent("live/tnt")
            let producer = try FFmpeg.startLiveHLS(in: folder, seconds: 60)
            defer { if producer.isRunning { kill(producer.processIdentifier, SIGTERM) } }
            // Three segments in the window before a player starts.
            let ready = Date().addingTimeInterval(20)
            while Date() < ready {
                let text = (try? String(contentsOf: folder.appendingPathComponent("index.m3u8"), encoding: .utf8)) ?? ""
                if text.components(separatedBy: "#EXTINF").count > 3 { break }
                try await Task.sleep(for: .milliseconds(200))
            }
            // The live playlist stands where the profile's resource is: the folder's own index.
            try Data(
                "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-STREAM-INF:BANDWIDTH=300000\nindex.m3u8\n".utf8
            ).write(to: folder.appendingPathComponent("master.m3u8"))
            let started = Date()
            let location = try await stack.exchange("TNT-LIVE")
            // Nine seconds of a live stream: three times the CDN token's lifetime.
            let played = try await offloaded { try FFmpeg.play(location, seconds: 9, in: stack.directory) }
            #expect(played.status == 0, "\(played.text)")
            #expect(Date().timeIntervalSince(started) > 6, "the player did not play past the token's lifetime")
            let requests = stack.edgeRequests(under: "/live/tnt/")
            #expect(requests.count >= 6, "\(stack.edgeLog)")
            for request in requests { #expect([200, 206].contains(request.status) && request.secureLink == "1", "\(request)") }

            // Once the session has ended, the route refuses, and a player gets nothing more.
            let end = started.addingTimeInterval(25)
            if end > Date() { try await Task.sleep(for: .seconds(end.timeIntervalSinceNow)) }
            let refused = try await stack.gate(location)
            #expect(refused.status == 401)
            #expect(refused.tokenStatus == "SESSION_EXPIRED")
            let after = try await offloaded { try FFmpeg.play(location, seconds: 3, in: stack.directory) }
            #expect(after.status != 0, "\(after.text)")
        }
    }

    /// The shipped site exposes the player routes on its public name: a
    /// player opens the exchange link there and ffmpeg follows it to the
    /// manifest route; renewal is reached there; the viewer's address the
    /// gate binds is the one nginx saw, never one the client wrote.
    @Test func theShippedSiteServesThePlayerRoutes() async throws {
        let akamaiKey = "52a152a152a152a152a152a152a152a1"
        let gateArguments: @Sendable (URL) throws -> [String] = { directory in
            try Data((akamaiKey + "\n").utf8).write(to: directory.appendingPathComponent("akamai.key"))
            let profile = directory.appendingPathComponent("akamai.profile")
            try Data(
                """
                name = akamai-bound
                kind = akamai
                key = \(directory.path)/akamai.key
                resource = TNT https://akamai.media.test/hls/tnt/master.m3u8
                bind-ip = true
                lifetime = 600
                """.utf8
            ).write(to: profile)
            return ["--cdn-profile", profile.path]
        }
        try await withStack(gateArguments: gateArguments) { stack in
            try await FFmpeg.makeMultivariantTS(in: stack.www.appendingPathComponent("live/tnt"))
            var request = GateFixtures.request(resource: "TNT-LIVE")
            request.issueTime = TokenTimestamp.now()
            let link =
                "http://127.0.0.1:\(stack.sitePort)/v1/playback?token=\(GateFixtures.token(request))&resource=TNT-LIVE&profile=nginx-edge-manifest"
            let played = try await offloaded { try FFmpeg.play(link, in: stack.directory) }
            #expect(played.status == 0, "\(played.text)")
            #expect(stack.edgeRequests(under: "/live/tnt/").count >= 7, "\(stack.edgeLog)")
            // The site's log holds no credential: the session in the query is REDACTED.
            let siteLog = stack.nginx.logLines("tokengate.access.log")
            #expect(siteLog.contains { $0.contains("/v1/manifest/live/tnt/master.m3u8?tgs=REDACTED") }, "\(siteLog)")

            // The exchange through the site binds the address nginx saw.
            var akamai = GateFixtures.request(resource: "TNT")
            akamai.issueTime = TokenTimestamp.now()
            let body = "{\"token\":\"\(GateFixtures.token(akamai))\",\"resource\":\"TNT\",\"profile\":\"akamai-bound\"}"
            let exchanged = try await offloaded {
                try RawHTTP.request(
                    port: stack.sitePort,
                    method: "POST",
                    "/v1/playback",
                    headers: [("Content-Type", "application/json"), ("X-Real-IP", "203.0.113.9")],
                    body: body
                )
            }
            #expect(exchanged.status == 200, "\(exchanged.body)")
            #expect(exchanged.body.contains("ip=127.0.0.1~"), "\(exchanged.body)")
            #expect(!exchanged.body.contains("203.0.113.9"))
            let session = try #require(
                (try JSONSerialization.jsonObject(with: Data(exchanged.body.utf8)) as? [String: Any])?["session"] as? String
            )
            let renewed = try await offloaded {
                try RawHTTP.request(
                    port: stack.sitePort,
                    method: "POST",
                    "/v1/playback/renew",
                    headers: [("Content-Type", "application/json"), ("X-Token-Session", session)],
                    body: "{\"profile\":\"akamai-bound\"}"
                )
            }
            #expect(renewed.status == 200, "\(renewed.body)")
            #expect(renewed.tokenStatus == "VALID_SESSION")
            #expect(renewed.body.contains("ip=127.0.0.1~"), "\(renewed.body)")
        }
    }
}
