import EntitlementTokens
import Foundation
import IntegrationSupport
import Testing

@testable import GateTestSupport
@testable import TokenGate

/// End to end (docs/DESIGN.md#the-cdn-exchange): a real headless Chromium
/// opens the gate's `GET /v1/playback?token=…&resource=TNT`, follows the 303
/// to the shipped nginx edge (`deploy/nginx/tokengate-edge.conf`, the
/// shipped `nginx-edge` profile: ``ShippedEdge``) with the two cookies the
/// 303 set, and plays the channel there; the edge checks the cookies on the
/// playlist and on every segment without asking the gate.
///
/// Under names that are not loopback, on plain HTTP, as a real deployment
/// lays them out: the gate is `gate.media.test`, the edge `edge.media.test`
/// (Chromium maps both to 127.0.0.1, each on its own port), and the profile's
/// `cookie-domain = media.test` covers both, so the cookies the gate's answer
/// sets are ones the browser keeps and sends to the edge. They are not
/// `Secure` (the edge's URL is http), or the browser would drop them here.
///
/// The page `player.html` (a test-only location on the edge, same origin as
/// the media) plays as a web player fetches HLS: the playlist, then every
/// segment it lists, and reports each answer.
@Suite(
    .serialized,
    .enabled(
        if: Nginx.available && Browser.available,
        "nginx, chromium and chromedriver are needed (apt-get install nginx-light chromium chromium-driver)"
    ),
    .holdsMachineLock
)
struct SecureLinkEdgeBrowserTests {
    static let page = #"""
        <!doctype html>
        <html><head><meta charset="utf-8"><title>tokengate edge test player</title></head>
        <body>
        <script>
        // The playlist under `base`, then every segment it lists, with the
        // cookies (`credentials` 'same-origin') or without them ('omit').
        // Never from the browser's cache: each answer is the edge's.
        async function play(base, credentials) {
          const result = { segments: [] };
          try {
            const playlist = await fetch(base + 'master.m3u8', { credentials, cache: 'no-store' });
            result.playlist = { status: playlist.status, body: await playlist.text() };
            if (playlist.ok) {
              for (const line of result.playlist.body.split('\n')) {
                if (line === '' || line.startsWith('#')) continue;
                const answer = await fetch(new URL(line, base).href, { credentials, cache: 'no-store' });
                result.segments.push({ uri: line, status: answer.status, cache: answer.headers.get('X-Cache-Status'),
                                       body: await answer.text() });
              }
            }
          } catch (error) {
            result.failure = String(error);   // not `error`: WebDriver reads an object with one as its own error
          }
          return result;
        }
        </script>
        </body></html>
        """#

    static let files = SecureLinkEdgeTests.files.merging(["player.html": page]) { $1 }

    struct Stack: Sendable {
        var gate: String  // http://gate.media.test:<port>
        var edge: String  // http://edge.media.test:<port>
        var edgePort: Int
        var clock: GateFixtures.Clock
        var nginx: Nginx
        var edgeLog: [String] { nginx.logLines("tokengate-edge.access.log") }

        /// The gate's URL a player opens with a media token for TNT issued at the gate clock's time.
        func playbackURL() -> String {
            "\(gate)/v1/playback?token=\(SecureLinkEdgeTests.token(clock))&resource=TNT"
        }
    }

    func withStack(_ body: @Sendable (Stack, Browser) async throws -> Void) async throws {
        let directory = GateFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let port = try RawHTTP.freePort()
        let originPort = try RawHTTP.freePort()
        let edgeOrigin = "http://edge.media.test:\(port)"
        let edge = try ShippedEdge(
            port: port,
            origin: originPort,
            edge: edgeOrigin,
            cookieDomain: "media.test",
            directory: directory,
            serverLines: "    location = /player.html { root {{prefix}}/www; }"
        )
        let clock = GateFixtures.Clock()
        clock.set(TokenTimestamp.now())
        // The stream profile alone: the player's URL names no profile.
        let gate = try GateFixtures.runtime(["--cdn-profile", edge.profiles["nginx-edge"]!], clock: clock)
        try await gate.application(port: 0).test(.live) { gateClient in
            let nginx = try await offloaded { try Nginx(http: edge.http + ShippedEdge.origin(port: originPort), port: port, files: Self.files) }
            defer { nginx.stop() }
            // Media files a day old, as an origin's are: what a browser may cache by their age then covers the whole test.
            let aDayAgo = Date(timeIntervalSinceNow: -86_400)
            for path in Self.files.keys {
                try FileManager.default.setAttributes(
                    [.modificationDate: aDayAgo],
                    ofItemAtPath: nginx.prefix.appendingPathComponent("www/" + path).path
                )
            }
            let browser = try await offloaded {
                try Browser(arguments: ["--host-resolver-rules=MAP gate.media.test 127.0.0.1, MAP edge.media.test 127.0.0.1"])
            }
            let stack = Stack(gate: "http://gate.media.test:\(gateClient.port!)", edge: edgeOrigin, edgePort: port, clock: clock, nginx: nginx)
            do {
                try await body(stack, browser)
            } catch {
                _ = try? await offloaded { browser.stop() }
                throw error
            }
            _ = try? await offloaded { browser.stop() }
        }
    }

    /// Navigates to `url` as a viewer would (following redirects): where the
    /// browser ended up, that answer's HTTP status and the text it shows.
    static func navigate(_ browser: Browser, to url: String) async throws -> (href: String, status: Int, text: String) {
        let answer = try await offloadedPage {
            try browser.open(url)
            return try browser.execute(
                """
                const entry = performance.getEntriesByType('navigation')[0];
                return { href: location.href, status: entry ? entry.responseStatus : -1, text: document.body ? document.body.innerText : '' };
                """
            ) as? [String: Any] ?? [:]
        }
        return (answer["href"] as? String ?? "", answer["status"] as? Int ?? -1, answer["text"] as? String ?? "")
    }

    /// Runs the page's `play` on the edge's `folder` (`/hls/tnt/`).
    static func play(
        _ browser: Browser,
        stack: Stack,
        folder: String = "/hls/tnt/",
        credentials: String = "same-origin"
    ) async throws -> [String: Any] {
        try await offloadedPage {
            try browser.open(stack.edge + "/player.html")
            return try browser.execute("return play(arguments[0], arguments[1]);", [stack.edge + folder, credentials]) as? [String: Any] ?? [:]
        }
    }

    static func status(_ result: [String: Any]) -> Int? { (result["playlist"] as? [String: Any])?["status"] as? Int }

    @Test func aBrowserPlaysFromTheEdgeOnTheCookiesTheGatesRedirectSetAndNothingElsePlays() async throws {
        try await withStack { stack, browser in
            // The gate checks the media token, sets the cookies and sends the browser on to the edge.
            let url = stack.playbackURL()
            let landed = try await Self.navigate(browser, to: url)
            #expect(landed.href == stack.edge + "/hls/tnt/master.m3u8", "\(landed)")
            #expect(landed.status == 200, "\(landed.text) \(stack.nginx.errorLog)")
            #expect(landed.text.hasPrefix("#EXTM3U"))

            // What the browser kept: for the parent domain, the channel's folder, not Secure on http.
            let all = try await offloadedPage { try browser.devTools("Network.getAllCookies") }
            let cookies = (all["cookies"] as? [[String: Any]] ?? []).filter { ($0["name"] as? String)?.hasPrefix("tg_") == true }
            #expect(cookies.compactMap { $0["name"] as? String }.sorted() == ["tg_expires", "tg_md5"], "\(all)")
            for cookie in cookies {
                #expect(cookie["domain"] as? String == ".media.test")
                #expect(cookie["path"] as? String == "/hls/tnt/")
                #expect(cookie["httpOnly"] as? Bool == true)
                #expect(cookie["secure"] as? Bool == false)
            }

            // The player plays the playlist and every segment on them.
            let played = try await Self.play(browser, stack: stack)
            #expect(played["failure"] == nil, "\(played["failure"] ?? "")")
            #expect(Self.status(played) == 200, "\(played)")
            let segments = try #require(played["segments"] as? [[String: Any]])
            #expect(segments.map { $0["uri"] as? String } == ["seg1.ts", "seg2.ts"])
            #expect(segments.map { $0["status"] as? Int } == [200, 200], "\(segments)")
            #expect(segments.map { $0["body"] as? String } == ["tnt segment one", "tnt segment two"])
            // The edge checked each of them itself (the gate saw only the exchange).
            let checked = stack.edgeLog.filter { $0.contains("GET /hls/tnt/") }
            #expect(checked.count == 4, "\(stack.edgeLog)")  // the navigation, the playlist again, two segments
            #expect(checked.allSatisfy { $0.contains("\" 200 ") && $0.contains("secure_link=\"1\"") }, "\(checked)")

            // The same media token a second time: the gate refuses it, and the browser stays there.
            let again = try await Self.navigate(browser, to: url)
            #expect(again.href == url)
            #expect(again.status == 403)
            #expect(again.text.contains("TOKEN_REPLAYED"), "\(again.text)")

            // Without the cookies: refused by the edge.
            let bare = try await Self.play(browser, stack: stack, credentials: "omit")
            #expect(Self.status(bare) == 403, "\(bare)")

            // The cookies for another channel's folder (copied by hand): refused by the edge.
            for cookie in cookies {
                let name = cookie["name"] as? String ?? ""
                let value = cookie["value"] as? String ?? ""
                _ = try await offloadedPage {
                    try browser.devTools(
                        "Network.setCookie",
                        [
                            "name": name, "value": value, "url": stack.edge + "/hls/cnn/",
                            "path": "/hls/cnn/", "httpOnly": true,
                        ]
                    )
                }
            }
            let otherChannel = try await Self.play(browser, stack: stack, folder: "/hls/cnn/")
            #expect(Self.status(otherChannel) == 403, "\(otherChannel)")
            #expect(stack.edgeLog.last?.contains("GET /hls/cnn/master.m3u8") == true, "\(stack.edgeLog)")

            // A token the gate issued a lifetime and a minute ago: the redirect lands on 410, and so does every segment.
            // The playlist's first answer carried the origin's Last-Modified and no Cache-Control, so Chromium
            // may keep it fresh for a tenth of the file's age (RFC 9111 section 4.2.2) and answer this second
            // navigation to the same URL itself, never asking the edge; the files here are a day old, so it
            // would every time. Emptying the browser's cache makes the answer the edge's.
            _ = try await offloadedPage { try browser.devTools("Network.clearBrowserCache") }
            stack.clock.set(TokenTimestamp.now().adding(milliseconds: -(14_400 + 60) * 1000)!)
            let late = try await Self.navigate(browser, to: stack.playbackURL())
            #expect(late.href == stack.edge + "/hls/tnt/master.m3u8")
            #expect(late.status == 410, "\(late) \(stack.edgeLog)")
            let expired = try await offloadedPage {
                try browser.open(stack.edge + "/player.html")
                let status = try browser.execute(
                    "return fetch(arguments[0], { cache: 'no-store' }).then(answer => answer.status);",
                    [stack.edge + "/hls/tnt/seg1.ts"]
                )
                return ["status": status ?? NSNull()]
            }
            #expect(expired["status"] as? Int == 410)
        }
    }
}
