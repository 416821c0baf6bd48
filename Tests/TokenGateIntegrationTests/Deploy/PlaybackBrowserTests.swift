import Foundation
import IntegrationSupport
import Testing

@testable import GateTestSupport
@testable import TokenGate

/// A real headless Chromium plays through the shipped nginx site
/// (docs/DESIGN.md#the-session-cookie, docs/DESIGN.md#web-players-on-another-origin), on
/// plain HTTP and under names that are not loopback: Chromium resolves
/// `media.test` and `player.test` to 127.0.0.1 (`--host-resolver-rules`), so
/// the pages are not secure contexts, as a real player's http:// page is not
/// (http://127.0.0.1 and http://localhost are, and keep a `Secure` cookie:
/// a test there passes while real players fail).
///
/// The page `player.html` plays the way a web player fetches HLS: the
/// playlist with a fresh token, then every segment the playlist lists; it
/// reports what it could read of each answer.
@Suite(
    .serialized,
    .enabled(
        if: Nginx.available && Browser.available,
        "nginx, chromium and chromedriver are needed (apt-get install nginx-light chromium chromium-driver)"
    ),
    .holdsMachineLock
)
struct PlaybackBrowserTests {
    struct Stack: Sendable {
        var media: String  // http://media.test:<port>: the shipped site, with the test page at /player.html
        var player: Int  // the port of the web player's own site (player.test, and evil.test, unlisted)
        var port: Int
        var nginx: Nginx
        var accessLog: [String] { nginx.logLines("tokengate.access.log") }
    }

    static let page = #"""
        <!doctype html>
        <html><head><meta charset="utf-8"><title>tokengate test player</title></head>
        <body>
        <script>
        // Plays an HLS playlist as a web player does: the playlist with a fresh token,
        // then every segment it lists. `cookies`: credentials 'include', the session
        // rides in the site's cookie. `header`: no cookies (a player on another site),
        // the session read from X-Token-Session and sent back in that header.
        async function play(base, token, mode) {
          const credentials = mode === 'cookies' ? 'include' : 'omit';
          const read = (answer) => ({
            status: answer.status,
            tokenStatus: answer.headers.get('X-Token-Status'),
            session: answer.headers.get('X-Token-Session'),
            reason: answer.headers.get('X-Token-Reason'),
            setCookie: answer.headers.get('X-Token-Set-Cookie'),
          });
          const result = { segments: [] };
          try {
            const playlist = await fetch(base + 'master.m3u8?token=' + encodeURIComponent(token), { credentials });
            result.playlist = read(playlist);
            const text = await playlist.text();
            result.playlist.body = text;
            const session = result.playlist.session;
            for (const line of text.split('\n')) {
              if (line === '' || line.startsWith('#')) continue;
              const headers = mode === 'header' && session ? { 'X-Token-Session': session } : {};
              const answer = await fetch(new URL(line, base).href, { credentials, headers });
              result.segments.push(Object.assign(read(answer), { uri: line, body: await answer.text() }));
            }
            // Once more, without a token: only the stored session can let it through.
            const headers = mode === 'header' && session ? { 'X-Token-Session': session } : {};
            result.again = read(await fetch(base + 'master.m3u8', { credentials, headers }));
          } catch (error) {
            result.failure = String(error);   // not `error`: WebDriver reads an object with one as its own error
          }
          return result;
        }
        </script>
        </body></html>
        """#

    static let files = [
        "hls/tnt/master.m3u8": "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:6\n#EXTINF:6.0,\nseg1.ts\n#EXTINF:6.0,\nseg2.ts\n#EXT-X-ENDLIST\n",
        "hls/tnt/seg1.ts": "segment one",
        "hls/tnt/seg2.ts": "segment two",
        "player.html": page,
    ]

    func withStack(_ body: @Sendable (Stack, Browser) async throws -> Void) async throws {
        let directory = GateFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let secret = GateFixtures.sessionSecret(in: directory)
        let gate = try GateFixtures.runtime(["--session-secret", secret, "--session-lifetime", "600"])
        try await gate.application(port: 0).test(.live) { gateClient in
            let port = try RawHTTP.freePort()
            let originPort = try RawHTTP.freePort()
            let playerPort = try RawHTTP.freePort()
            // The test page, same origin as the media: a test-only location in the shipped server block.
            let site = try ShippedNginxSite(
                gate: gateClient.port!,
                origin: originPort,
                port: port,
                playerOrigin: "http://player.test:\(playerPort)",
                serverLines: "    location = /player.html { root {{prefix}}/www; }",
                gateReadTimeout: "15s"
            )
            let http =
                site.http + """
                    server {
                        listen 127.0.0.1:\(originPort);
                        root {{prefix}}/www;
                    }
                    # The web player's own site: another origin (player.test, listed; evil.test, not).
                    server {
                        listen 127.0.0.1:\(playerPort);
                        root {{prefix}}/www;
                        location = /player.html { }
                        location / { return 404; }
                    }
                    """
            let nginx = try await offloaded { try Nginx(http: http, port: port, files: Self.files, configFiles: site.snippets) }
            defer { nginx.stop() }
            let browser = try await offloaded {
                try Browser(arguments: ["--host-resolver-rules=MAP media.test 127.0.0.1, MAP player.test 127.0.0.1, MAP evil.test 127.0.0.1"])
            }
            do {
                try await body(Stack(media: "http://media.test:\(port)", player: playerPort, port: port, nginx: nginx), browser)
            } catch {
                _ = try? await offloaded { browser.stop() }
                throw error
            }
            _ = try? await offloaded { browser.stop() }
        }
    }

    /// Opens `page` and plays `/hls/tnt/` of the media site with a fresh token.
    static func play(_ browser: Browser, page: String, media: String, mode: String) async throws -> [String: Any] {
        let token = GateFixtures.token()
        return try await offloadedPage {
            try browser.open(page)
            return try browser.execute(
                "return play(arguments[0], arguments[1], arguments[2]);",
                [media + "/hls/tnt/", token, mode]
            ) as? [String: Any] ?? [:]
        }
    }

    @Test func aBrowserPlaysThePlaylistAndItsSegmentsOnTheSessionCookieOverPlainHTTP() async throws {
        try await withStack { stack, browser in
            let result = try await Self.play(browser, page: stack.media + "/player.html", media: stack.media, mode: "cookies")
            #expect(result["failure"] == nil, "\(result["failure"] ?? "")")
            let playlist = try #require(result["playlist"] as? [String: Any], "\(result)")
            #expect(playlist["status"] as? Int == 200, "\(stack.nginx.errorLog)")
            #expect(playlist["tokenStatus"] as? String == "VALID_TOKEN")
            #expect(playlist["reason"] is NSNull, "X-Token-Reason reached the page")
            #expect(playlist["setCookie"] is NSNull, "X-Token-Set-Cookie reached the page")
            let segments = try #require(result["segments"] as? [[String: Any]])
            #expect(segments.map { $0["uri"] as? String } == ["seg1.ts", "seg2.ts"])
            for segment in segments {
                let uri = segment["uri"] as? String ?? "?"
                // The old site's Secure cookie is dropped on http://media.test: every segment was 401 NO_TOKEN.
                #expect(segment["status"] as? Int == 200, "\(uri): \(segment["status"] ?? "-") \(segment["tokenStatus"] ?? "-")")
                #expect(segment["tokenStatus"] as? String == "VALID_SESSION", "\(uri)")
                #expect(segment["setCookie"] is NSNull && segment["reason"] is NSNull, "\(uri)")
            }
            #expect(segments.map { $0["body"] as? String } == ["segment one", "segment two"])
            // The browser kept the cookie: a second request with no token plays on it.
            let again = try #require(result["again"] as? [String: Any])
            #expect(again["status"] as? Int == 200)
            #expect(again["tokenStatus"] as? String == "VALID_SESSION")

            // What the browser stored (HttpOnly: the page cannot see it; DevTools can).
            let cookies = try await offloadedPage { try browser.devTools("Network.getAllCookies") }
            let stored = (cookies["cookies"] as? [[String: Any]] ?? []).filter { $0["name"] as? String == "tokengate_session" }
            #expect(stored.count == 1, "\(cookies)")
            let cookie = try #require(stored.first)
            #expect(cookie["domain"] as? String == "media.test")
            #expect(cookie["path"] as? String == "/hls/tnt/")
            #expect(cookie["httpOnly"] as? Bool == true)
            #expect(cookie["secure"] as? Bool == false)
            #expect(cookie["sameSite"] as? String == "Lax")
            let seen = try await offloadedPage {
                ["cookie": try browser.execute("return document.cookie;") as? String ?? "?"]
            }
            #expect(seen["cookie"] as? String == "", "an HttpOnly cookie is not the page's")

            // Every request reached the gate once and only the playlist spent a token.
            let lines = stack.accessLog.compactMap(TokenGateLogLine.init).filter { $0.request.contains("/hls/tnt/") }
            #expect(lines.map(\.tokenStatus) == ["VALID_TOKEN", "VALID_SESSION", "VALID_SESSION", "VALID_SESSION"], "\(stack.accessLog)")
        }
    }

    @Test func aPlayerOnAListedOriginPlaysOnTheSessionHeaderAndNoOtherOriginReads() async throws {
        try await withStack { stack, browser in
            let page = "http://player.test:\(stack.player)/player.html"
            let result = try await Self.play(browser, page: page, media: stack.media, mode: "header")
            #expect(result["failure"] == nil, "\(result["failure"] ?? "")")
            let playlist = try #require(result["playlist"] as? [String: Any], "\(result)")
            #expect(playlist["status"] as? Int == 200, "\(stack.nginx.errorLog)")
            #expect(playlist["tokenStatus"] as? String == "VALID_TOKEN", "X-Token-Status is not exposed")
            let session = playlist["session"] as? String
            #expect(session?.isEmpty == false, "X-Token-Session is not exposed: \(playlist)")
            #expect(playlist["reason"] is NSNull && playlist["setCookie"] is NSNull)
            let segments = try #require(result["segments"] as? [[String: Any]])
            #expect(segments.count == 2)
            for segment in segments {
                let uri = segment["uri"] as? String ?? "?"
                #expect(segment["status"] as? Int == 200, "\(uri): \(segment["status"] ?? "-") \(segment["tokenStatus"] ?? "-")")
                #expect(segment["tokenStatus"] as? String == "VALID_SESSION", "\(uri)")
            }
            #expect(segments.map { $0["body"] as? String } == ["segment one", "segment two"])
            // The header-carrying fetches were preflighted, and nginx answered the preflights itself.
            let lines = stack.accessLog.compactMap(TokenGateLogLine.init)
            let preflights = lines.filter { $0.request.hasPrefix("OPTIONS /hls/tnt/") }
            #expect(preflights.count >= 1, "no preflight: \(stack.accessLog)")
            for line in preflights {
                #expect(line.status == 204)
                #expect(line.gate == "-", "a preflight reached the gate")
            }
            #expect(
                lines.filter { $0.request.hasPrefix("GET /hls/tnt/") }.map(\.tokenStatus)
                    == ["VALID_TOKEN", "VALID_SESSION", "VALID_SESSION", "VALID_SESSION"],
                "\(stack.accessLog)"
            )

            // An origin the site does not list: the browser lets the page read nothing.
            let evil = try await Self.play(browser, page: "http://evil.test:\(stack.player)/player.html", media: stack.media, mode: "header")
            #expect(evil["playlist"] == nil, "an unlisted origin read the answer: \(evil)")
            #expect((evil["failure"] as? String)?.contains("TypeError") == true, "\(evil)")
        }
    }
}
