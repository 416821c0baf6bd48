import EntitlementTokens
import Foundation
import IntegrationSupport
import Testing

@testable import GateTestSupport
@testable import TokenGate

/// `tokeninspect har` on captures nobody here wrote by hand (docs/HAR.md,
/// "What the tests capture"): mitmproxy's `hardump` records real clients as
/// they play through the shipped nginx site, the gate's exchange and a
/// shipped nginx edge, in scenarios that succeed and that fail; the report's
/// findings must name the failure each scenario planted and nothing else, on
/// the capture as written and on the same capture as a sanitized browser
/// export writes it; and `--redact` must leave no 12-byte run of any
/// credential the capture holds.
///
/// - ffmpeg (a player that keeps no cookies) through mitmproxy as its HTTP
///   proxy, on the gate's manifest route and the shipped query edge
///   (``ManifestRouteTests``' stack): a clean play, a media token sent
///   twice, a segment outside the token's folder, a device whose clock is
///   15 minutes ahead (libfaketime on mitmdump, whose clock the HAR's times
///   are, and on ffmpeg).
/// - headless Chromium through mitmproxy (a PAC file sends the `.test`
///   names to it), on the cookie edge: a clean play, the CDN cookie's
///   lifetime ending mid-stream, a segment outside the cookie's folder.
///
/// mitmproxy writes entries in completion order and drops `Max-Age` and
/// `Expires` from its parsed cookie lists; the report sorts by start time and
/// reads lifetimes from the raw `Set-Cookie`, which these captures prove.
@Suite(
    .serialized,
    .enabled(
        if: Nginx.available && FFmpeg.available && MitmDump.available,
        "nginx, ffmpeg and mitmproxy are needed (apt-get install nginx-light ffmpeg; scripts/test installs PyPI's mitmproxy in a venv of its own)"
    ),
    .holdsMachineLock
)
struct HARCaptureTests {
    // MARK: What each capture must show

    /// Reads `har` with the test key and `profiles` and checks the findings are
    /// exactly `expected` (and the exit status says whether one is a failure);
    /// then the sanitized export of it, whose findings must be exactly
    /// `sanitized`; and each one's `--redact` copy against every credential
    /// of the capture and `minted`.
    static func check(
        _ har: CapturedHAR,
        profiles: [String],
        expected: [String],
        sanitized: [String],
        minted: [String]
    ) throws {
        let report = try har.inspect(profiles: profiles)
        #expect(report.kinds == expected, "\(report.text)\n\(Self.entries(report))")
        #expect(report.status == (report.findings.contains(where: \.failure) ? 1 : 0))
        let credentials = try har.credentials(minted: minted)
        #expect(!credentials.isEmpty, "the capture holds no credential: \(Self.entries(report))")
        #expect(CapturedHAR.leftovers(of: credentials, in: report.redacted).isEmpty, "\(CapturedHAR.leftovers(of: credentials, in: report.redacted))")
        // The markers are there: the redaction replaced, it did not drop.
        #expect(String(decoding: report.redacted, as: UTF8.self).contains("REDACTED-"))

        let stripped = try har.sanitized()
        let strippedReport = try stripped.inspect(profiles: profiles)
        #expect(strippedReport.kinds == sanitized, "sanitized: \(strippedReport.text)\n\(Self.entries(strippedReport))")
        let strippedCredentials = try stripped.credentials(minted: minted)
        #expect(CapturedHAR.leftovers(of: strippedCredentials, in: strippedReport.redacted).isEmpty)
    }

    /// The report's entries, one a line, for a failure's message.
    static func entries(_ report: CapturedHAR.Report) -> String {
        (report.json["entries"] as? [[String: Any]] ?? []).map { entry in
            "#\(entry["number"] ?? "?") \(entry["time"] ?? "-") \(entry["method"] ?? "") \(entry["url"] ?? "") \(entry["status"] ?? "")"
        }.joined(separator: "\n")
    }

    /// A media token for `resource`, issued now (the gate and nginx run on the real clock).
    static func mediaToken(resource: String) -> String {
        var request = GateFixtures.request(resource: resource)
        request.issueTime = TokenTimestamp.now()
        return GateFixtures.token(request)
    }

    // MARK: ffmpeg on the manifest route

    /// ffmpeg as a player, with mitmproxy as its HTTP proxy (`http_proxy`),
    /// its clock `clockOffset` seconds off when asked; the status and its output.
    static func ffmpeg(_ url: String, proxy: Int, clockOffset: Int? = nil, in directory: URL) throws -> (status: Int32, text: String) {
        var environment = try clockOffset.map { try Integration.skewedClock(by: $0) } ?? ProcessInfo.processInfo.environment
        environment["http_proxy"] = "http://127.0.0.1:\(proxy)"
        environment["no_proxy"] = nil
        environment["NO_PROXY"] = nil
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try FFmpeg.path())
        process.arguments = [
            "-hide_banner", "-nostdin", "-loglevel", "warning", "-rw_timeout", "10000000", "-i", url, "-map", "0", "-c", "copy", "-f", "null", "-",
        ]
        process.environment = environment
        process.currentDirectoryURL = directory
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let text = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: text, as: UTF8.self))
    }

    /// The manifest route's stack with a VOD stream in `/live/tnt/` (and the
    /// slate another folder holds); `body` gets the stack and the link a
    /// player opens (the exchange on the shipped site, for TNT-LIVE).
    func withManifestStack(_ body: @Sendable (ManifestRouteTests.Stack) async throws -> Void) async throws {
        try await ManifestRouteTests().withStack(profileLines: []) { stack in
            try await FFmpeg.makeMultivariantTS(in: stack.www.appendingPathComponent("live/tnt"), seconds: 4)
            try await body(stack)
        }
    }

    static func playbackLink(_ stack: ManifestRouteTests.Stack, token: String) -> String {
        "http://127.0.0.1:\(stack.sitePort)/v1/playback?token=\(token)&resource=TNT-LIVE"
    }

    @Test func ffmpegPlaysThroughTheManifestRouteAndTheCaptureShowsNoFailure() async throws {
        try await withManifestStack { stack in
            let proxy = try MitmDump(.forward, directory: stack.directory, name: "ffmpeg-clean")
            let token = Self.mediaToken(resource: "TNT-LIVE")
            let played = try await offloaded { try Self.ffmpeg(Self.playbackLink(stack, token: token), proxy: proxy.port, in: stack.directory) }
            #expect(played.status == 0, "\(played.text)")
            try proxy.finish()
            #expect(stack.edgeRequests(under: "/live/tnt/").count >= 4, "\(stack.edgeLog)")
            try Self.check(CapturedHAR(file: proxy.har), profiles: [stack.profile], expected: [], sanitized: [], minted: [token])
        }
    }

    @Test func aMediaTokenSentTwiceIsTheOneFinding() async throws {
        try await withManifestStack { stack in
            let proxy = try MitmDump(.forward, directory: stack.directory, name: "ffmpeg-replayed")
            let token = Self.mediaToken(resource: "TNT-LIVE")
            let link = Self.playbackLink(stack, token: token)
            let first = try await offloaded { try Self.ffmpeg(link, proxy: proxy.port, in: stack.directory) }
            #expect(first.status == 0, "\(first.text)")
            // The player starts again with the link it was given: the exchange refuses the spent token.
            let second = try await offloaded { try Self.ffmpeg(link, proxy: proxy.port, in: stack.directory) }
            #expect(second.status != 0, "\(second.text)")
            try proxy.finish()
            try Self.check(
                CapturedHAR(file: proxy.har),
                profiles: [stack.profile],
                expected: ["TOKEN_REUSED"],
                sanitized: ["TOKEN_REUSED"],
                minted: [token]
            )
        }
    }

    @Test func aSegmentOutsideTheTokensFolderIsTheOneFinding() async throws {
        try await withManifestStack { stack in
            // The packager names a slate from another folder in one variant's playlist:
            // the gate writes no token into a URI outside the profile's folder, and the edge refuses it.
            let slate = stack.www.appendingPathComponent("live/slate")
            try FileManager.default.createDirectory(at: slate, withIntermediateDirectories: true)
            let variant = stack.www.appendingPathComponent("live/tnt/stream_0/index.m3u8")
            try FileManager.default.copyItem(
                at: stack.www.appendingPathComponent("live/tnt/stream_0/seg1.ts"),
                to: slate.appendingPathComponent("slate.ts")
            )
            let playlist = try String(contentsOf: variant, encoding: .utf8)
            let named = playlist.replacingOccurrences(of: "\nseg1.ts\n", with: "\nhttp://127.0.0.1:\(stack.edgePort)/live/slate/slate.ts\n")
            #expect(named != playlist, "\(playlist)")
            try Data(named.utf8).write(to: variant)
            let proxy = try MitmDump(.forward, directory: stack.directory, name: "ffmpeg-outside")
            let token = Self.mediaToken(resource: "TNT-LIVE")
            _ = try await offloaded { try Self.ffmpeg(Self.playbackLink(stack, token: token), proxy: proxy.port, in: stack.directory) }
            try proxy.finish()
            #expect(stack.edgeLog.contains { $0.contains("/live/slate/slate.ts") && $0.contains("\" 403 ") }, "\(stack.edgeLog)")
            try Self.check(
                CapturedHAR(file: proxy.har),
                profiles: [stack.profile],
                expected: ["URL_NOT_COVERED"],
                sanitized: ["URL_NOT_COVERED"],
                minted: [token]
            )
        }
    }

    @Test(.enabled(if: Integration.fakeTime, "faketime is needed (apt-get install faketime)"))
    func aDeviceClockFifteenMinutesAheadIsTheOneFinding() async throws {
        try await withManifestStack { stack in
            // The device's clock: the player's and the capturing proxy's (the HAR's times are mitmdump's).
            let skew = 900
            let proxy = try MitmDump(.forward, directory: stack.directory, name: "ffmpeg-skewed", clockOffset: skew)
            let token = Self.mediaToken(resource: "TNT-LIVE")
            let played = try await offloaded {
                try Self.ffmpeg(Self.playbackLink(stack, token: token), proxy: proxy.port, clockOffset: skew, in: stack.directory)
            }
            #expect(played.status == 0, "\(played.text)")
            try proxy.finish()
            let report = try CapturedHAR(file: proxy.har).inspect(profiles: [stack.profile])
            let clock = try #require(report.findings.first { $0.kind == "CLOCK_SKEW" }, "\(report.text)")
            #expect(clock.message.contains("ahead of"), "\(clock.message)")
            try Self.check(
                CapturedHAR(file: proxy.har),
                profiles: [stack.profile],
                expected: ["CLOCK_SKEW"],
                sanitized: ["CLOCK_SKEW"],
                minted: [token]
            )
        }
    }

    // MARK: Chromium on the cookie edge

    static let page = #"""
        <!doctype html>
        <html><head><meta charset="utf-8"><title>tokengate HAR capture player</title></head>
        <body>
        <script>
        // A web player on the edge, on the edge's cookies, never from the cache:
        // `playlist` reads a playlist and answers its status and the segments'
        // URLs; `segments` fetches each of those in turn and answers the statuses.
        async function playlist(url) {
          const answer = await fetch(url, { credentials: 'same-origin', cache: 'no-store' });
          const text = await answer.text();
          const uris = text.split('\n').filter((line) => line !== '' && !line.startsWith('#'));
          return { status: answer.status, segments: uris.map((uri) => new URL(uri, url).href) };
        }
        // Through the proxy a request now and then never left the browser (it
        // sat on a connection the proxy never read from); one that has not
        // answered within 4 s is asked again, as a player's retry would.
        async function segments(urls) {
          const statuses = [];
          let retries = 0;
          for (const url of urls) {
            for (let attempt = 0; ; attempt += 1) {
              try {
                const answer = await fetch(url, { credentials: 'same-origin', cache: 'no-store', signal: AbortSignal.timeout(4000) });
                await answer.text();
                statuses.push(answer.status);
                break;
              } catch (error) {
                if (attempt === 2) throw error;
                retries += 1;
              }
            }
          }
          return { statuses, retries };
        }
        </script>
        </body></html>
        """#

    static let files = [
        "hls/tnt/master.m3u8":
            "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2.0,\nseg1.ts\n#EXTINF:2.0,\nseg2.ts\n#EXTINF:2.0,\nseg3.ts\n#EXT-X-ENDLIST\n",
        "hls/tnt/slate.m3u8": "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2.0,\nseg1.ts\n#EXTINF:2.0,\n/hls/slate/slate.ts\n#EXT-X-ENDLIST\n",
        "hls/tnt/seg1.ts": "tnt segment one",
        "hls/tnt/seg2.ts": "tnt segment two",
        "hls/tnt/seg3.ts": "tnt segment three",
        "hls/slate/slate.ts": "the slate",
        "player.html": page,
    ]

    struct CookieStack: Sendable {
        var gate: String  // http://gate.media.test:<site port>: the shipped site in front of the gate
        var edge: String  // http://edge.media.test:<edge port>
        var profile: String
        var directory: URL
        var nginx: Nginx
    }

    /// The gate (in process, real clock) with the shipped `nginx-edge` profile
    /// (its lifetime `lifetime`), behind the shipped site, and the shipped
    /// cookie edge, all in one nginx; Chromium sends the `.test` names to
    /// mitmproxy (a PAC file), which connects to loopback.
    func withCookieStack(lifetime: Int, _ body: @Sendable (CookieStack, Browser, MitmDump) async throws -> Void) async throws {
        let directory = GateFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let sitePort = try RawHTTP.freePort()
        let edgePort = try RawHTTP.freePort()
        let originPort = try RawHTTP.freePort()
        let edge = try ShippedEdge(
            port: edgePort,
            origin: originPort,
            edge: "http://edge.media.test:\(edgePort)",
            cookieDomain: "media.test",
            directory: directory,
            serverLines: "    location = /player.html { root {{prefix}}/www; }"
        )
        let profile = try #require(edge.profiles["nginx-edge"])
        let text = try String(contentsOfFile: profile, encoding: .utf8)
        try Data(try ShippedEdge.substitute(text, in: profile, [("lifetime = 14400", "lifetime = \(lifetime)")]).utf8)
            .write(to: URL(fileURLWithPath: profile))
        let runtime = try GateRuntime(
            configuration: try GateFixtures.configuration(["--cdn-profile", profile]),
            logger: LogCapture().logger,
            clock: TokenTimestamp.now
        )
        try await runtime.application(port: 0).test(.live) { gateClient in
            let site = try ShippedNginxSite(gate: gateClient.port!, origin: originPort, port: sitePort, gateReadTimeout: "15s")
            let http = edge.http + ShippedEdge.origin(port: originPort) + site.http
            let nginx = try await offloaded { try Nginx(http: http, port: edgePort, files: Self.files, configFiles: site.snippets) }
            defer { nginx.stop() }
            let proxy = try MitmDump(.forward, directory: directory, name: "chromium")
            defer { proxy.stop() }
            let pac = "function FindProxyForURL(url, host) { return dnsDomainIs(host, '.test') ? 'PROXY 127.0.0.1:\(proxy.port)' : 'DIRECT'; }"
            let browser = try await offloaded {
                try Browser(arguments: ["--proxy-pac-url=data:application/x-ns-proxy-autoconfig;base64," + Data(pac.utf8).base64EncodedString()])
            }
            let stack = CookieStack(
                gate: "http://gate.media.test:\(sitePort)",
                edge: "http://edge.media.test:\(edgePort)",
                profile: profile,
                directory: directory,
                nginx: nginx
            )
            do {
                try await body(stack, browser, proxy)
            } catch {
                _ = try? await offloaded { browser.stop() }
                proxy.stop()
                throw RawHTTP.Failure(description: "\(error)\nmitmdump:\n\(proxy.log.suffix(3000))\nnginx:\n\(nginx.errorLog.suffix(1000))")
            }
            _ = try? await offloaded { browser.stop() }
        }
    }

    /// The viewer opens the gate's link (the exchange sets the cookies and sends
    /// the browser on to the edge), then the player page plays `playlist` on the
    /// edge; after `pauseAfter` segments the viewer pauses for `pause` seconds
    /// (the test waits: the page's timers are not the clock here). The
    /// playlist's status, then each segment's.
    static func play(
        _ browser: Browser,
        stack: CookieStack,
        token: String,
        playlist: String = "master.m3u8",
        pauseAfter: Int = Int.max,
        pause: Double = 0
    ) async throws -> [Int] {
        let listed = try await offloadedPage {
            try browser.open("\(stack.gate)/v1/playback?token=\(token)&resource=TNT")
            try browser.open(stack.edge + "/player.html")
            return try browser.execute("return playlist(arguments[0]);", [stack.edge + "/hls/tnt/" + playlist]) as? [String: Any] ?? [:]
        }
        let urls = listed["segments"] as? [String] ?? []
        var statuses = [listed["status"] as? Int ?? -1]
        for (index, part) in [Array(urls.prefix(pauseAfter)), Array(urls.dropFirst(min(pauseAfter, urls.count)))].enumerated() where !part.isEmpty {
            if index == 1, pause > 0 { try await Task.sleep(for: .seconds(pause)) }
            let played = try await offloadedPage { try browser.execute("return segments(arguments[0]);", [part]) as? [String: Any] ?? [:] }
            statuses += played["statuses"] as? [Int] ?? []
        }
        return statuses
    }

    @Test(.enabled(if: Browser.available, "chromium and chromedriver are needed (apt-get install chromium chromium-driver)"))
    func chromiumPlaysOnTheEdgesCookiesAndTheCaptureShowsNoFailure() async throws {
        try await withCookieStack(lifetime: 600) { stack, browser, proxy in
            let token = Self.mediaToken(resource: "TNT")
            let statuses = try await Self.play(browser, stack: stack, token: token)
            #expect(statuses == [200, 200, 200, 200], "\(stack.nginx.errorLog)")
            _ = try? await offloaded { browser.stop() }
            try proxy.finish()
            try Self.check(CapturedHAR(file: proxy.har), profiles: [stack.profile], expected: [], sanitized: ["SANITIZED"], minted: [token])
        }
    }

    @Test(.enabled(if: Browser.available, "chromium and chromedriver are needed (apt-get install chromium chromium-driver)"))
    func aCDNCookieWhoseLifetimeEndsMidStreamIsTheOneFinding() async throws {
        let lifetime = 4
        try await withCookieStack(lifetime: lifetime) { stack, browser, proxy in
            let token = Self.mediaToken(resource: "TNT")
            // The viewer pauses after the first segment past the cookie's Max-Age: the browser drops
            // it, and the edge refuses the next segments.
            let statuses = try await Self.play(browser, stack: stack, token: token, pauseAfter: 1, pause: Double(lifetime) + 1.5)
            #expect(statuses == [200, 200, 403, 403])
            _ = try? await offloaded { browser.stop() }
            try proxy.finish()
            try Self.check(
                CapturedHAR(file: proxy.har),
                profiles: [stack.profile],
                expected: ["COOKIE_EXPIRED"],
                // Without Set-Cookie the cookie's lifetime is not known: the report says the
                // export was sanitized and blames nobody for the refusals.
                sanitized: ["SANITIZED"],
                minted: [token]
            )
        }
    }

    @Test(.enabled(if: Browser.available, "chromium and chromedriver are needed (apt-get install chromium chromium-driver)"))
    func aSegmentOutsideTheCookiesFolderIsTheOneFinding() async throws {
        try await withCookieStack(lifetime: 600) { stack, browser, proxy in
            let token = Self.mediaToken(resource: "TNT")
            let statuses = try await Self.play(browser, stack: stack, token: token, playlist: "slate.m3u8")
            #expect(statuses == [200, 200, 403])
            _ = try? await offloaded { browser.stop() }
            try proxy.finish()
            try Self.check(
                CapturedHAR(file: proxy.har),
                profiles: [stack.profile],
                expected: ["URL_NOT_COVERED"],
                sanitized: ["URL_NOT_COVERED", "SANITIZED"],
                minted: [token]
            )
        }
    }
}
