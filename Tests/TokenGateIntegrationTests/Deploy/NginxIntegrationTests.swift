import CDNTokens
import EntitlementTokens
import Foundation
import HummingbirdTesting
import IntegrationSupport
import Testing

@testable import GateTestSupport
@testable import TokenGate

/// nginx in front of tokengate, with the shipped `deploy/nginx/tokengate.conf`
/// and the snippets it includes (ports, the access log's path and the web
/// player's origin substituted: ``ShippedNginxSite``) and nginx itself as the
/// media origin, echoing the `X-Token-*` values it received as
/// `X-Seen-Token-*` and recording every request line it receives.
@Suite(
    .serialized,
    .enabled(
        if: Nginx.available,
        "nginx is not installed (apt-get install nginx-light); TOKENINSPECT_INTEGRATION=require makes this a failure"
    )
)
struct NginxIntegrationTests {
    struct Stack: Sendable {
        var port: Int  // nginx, the shipped server block
        var extraPort: Int  // nginx, the test-only locations
        var gatePort: Int  // the gate the shipped site asks (closed for `.unreachable`)
        var httpsPort: Int?  // nginx, the shipped server block's HTTPS listener
        var clock: GateFixtures.Clock
        var nginx: Nginx
        /// What the gate the shipped site asks has logged.
        var gateLogs: LogCapture

        func get(_ target: String, headers: [(String, String)] = [], extra: Bool = false) async throws -> RawHTTP.Answer {
            try await RawHTTP.fetch(port: extra ? extraPort : port, target, headers: headers)
        }

        /// Every request line the media origin received, in order, byte for byte.
        var originRequests: [String] { nginx.logLines("origin.log") }
        /// The shipped site's access log (its `tokengate` format).
        var accessLog: [String] { nginx.logLines("tokengate.access.log") }
    }

    /// The gate the shipped site's `upstream tokengate` points at.
    enum SiteGate {
        case verifying  // verifies, memory replay store, sessions
        case refusingWrites  // any resource; its replay store refuses every write (503 REPLAY_CHECK_UNAVAILABLE)
        case unreachable  // a loopback port nothing listens on
        case silent  // a port that accepts and never answers (the site's 2 s read timeout)
    }

    static let files = [
        "hls/tnt/master.m3u8": "#EXTM3U\n#EXT-X-VERSION:3\nseg1.ts\nseg2.ts\n",
        "hls/tnt/seg1.ts": "segment one",
        "hls/tnt/seg2.ts": "segment two",
        "hls/cnn/seg1.ts": "cnn segment",
        "cached/a.ts": "cached location",
        "open/a.ts": "open location",
        "noresource/a.ts": "no resource",
    ]

    /// The web player's origin the tests list in the site's CORS map.
    static let playerOrigin = "http://player.test:8000"

    /// `tls`: a certificate and key for the site's HTTPS listener (its commented lines, uncommented).
    /// `gateArguments`: more `serve` options for the verifying gate (`--cat-key`…).
    func withStack(
        gate siteGate: SiteGate = .verifying,
        tls: (certificate: String, key: String)? = nil,
        gateArguments: [String] = [],
        _ body: @Sendable (Stack) async throws -> Void
    ) async throws {
        let clock = GateFixtures.Clock()
        let directory = GateFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let secret = GateFixtures.sessionSecret(in: directory)
        let gateLogs = LogCapture()
        let gate = try GateFixtures.runtime(
            ["--session-secret", secret, "--session-lifetime", "600"] + gateArguments,
            clock: clock,
            logs: gateLogs
        )
        // A second gate: any resource (for hostile resource ids) and a replay store that refuses every write.
        let open = try GateRuntime(
            configuration: GateFixtures.configuration(["--allow-any-resource"], base: ["--key", GateFixtures.publicKey, "--requestor", "TNT"]),
            logger: LogCapture().logger,
            clock: { clock.read() },
            keyPollInterval: .seconds(60),
            replay: .init(store: RefusingReplayStore(), probe: { nil })
        )
        try await gate.application(port: 0).test(.live) { gateClient in
            try await open.application(port: 0).test(.live) { openClient in
                let port = try RawHTTP.freePort()
                let originPort = try RawHTTP.freePort()
                let extraPort = try RawHTTP.freePort()
                let silent = siteGate == .silent ? try SilentListener() : nil
                defer { withExtendedLifetime(silent) {} }
                let gatePort =
                    switch siteGate {
                    case .verifying: gateClient.port!
                    case .refusingWrites: openClient.port!
                    case .unreachable: try RawHTTP.freePort()
                    case .silent: silent!.port
                    }
                let https = try tls.map { certificate in
                    ShippedNginxSite.HTTPS(port: try RawHTTP.freePort(), certificate: certificate.certificate, key: certificate.key)
                }
                let site = try ShippedNginxSite(
                    gate: gatePort,
                    origin: originPort,
                    port: port,
                    playerOrigin: Self.playerOrigin,
                    https: https,
                    gateReadTimeout: siteGate == .silent ? nil : "15s"
                )
                let http = site.http + Self.testServers(origin: originPort, extra: extraPort, open: openClient.port!)
                let nginx = try await offloaded { try Nginx(http: http, port: port, files: Self.files, configFiles: site.snippets) }
                defer { nginx.stop() }
                try await body(
                    Stack(
                        port: port,
                        extraPort: extraPort,
                        gatePort: gatePort,
                        httpsPort: https?.port,
                        clock: clock,
                        nginx: nginx,
                        gateLogs: gateLogs
                    )
                )
            }
        }
    }

    static func testServers(origin: Int, extra: Int, open: Int) -> String {
        """
        # The media origin: serves the files, echoes what it received, and
        # records every request line it receives, raw (escape=none).
        log_format origin_request escape=none '$request';
        server {
            listen 127.0.0.1:\(origin);
            root {{prefix}}/www;
            access_log {{prefix}}/logs/origin.log origin_request;
            location / {
                add_header X-Seen-Token-Status $http_x_token_status;
                add_header X-Seen-Token-Kind $http_x_token_kind;
                add_header X-Seen-Token-Requestor $http_x_token_requestor;
                add_header X-Seen-Token-Resource $http_x_token_resource;
                add_header X-Seen-Token-Mvpd $http_x_token_mvpd;
                add_header X-Seen-Token-Expires $http_x_token_expires;
            }
        }
        proxy_cache_path {{prefix}}/cache keys_zone=tokengate_auth:1m;
        upstream tokengate_open { server 127.0.0.1:\(open); keepalive 4; }
        server {
            listen 127.0.0.1:\(extra);
            root {{prefix}}/www;
            # An auth location behind a cache that would keep answers for 10 minutes.
            location = /_tokengate_cached {
                internal;
                proxy_pass http://tokengate/v1/auth-request;
                proxy_http_version 1.1;
                proxy_set_header Connection "";
                proxy_pass_request_body off;
                proxy_set_header Content-Length "";
                proxy_set_header X-Original-URI $request_uri;
                proxy_set_header X-Token-Resource TNT;
                proxy_cache tokengate_auth;
                proxy_cache_key $request_uri;
                proxy_cache_valid 200 401 403 10m;
            }
            location /cached/ {
                auth_request /_tokengate_cached;
                auth_request_set $cached_status $upstream_http_x_token_status;
                add_header X-Token-Status $cached_status always;
            }
            location = /_tokengate_open {
                internal;
                proxy_pass http://tokengate_open/v1/auth-request;
                proxy_http_version 1.1;
                proxy_set_header Connection "";
                proxy_pass_request_body off;
                proxy_set_header Content-Length "";
                proxy_set_header X-Original-URI $request_uri;
            }
            location /open/ {
                auth_request /_tokengate_open;
                auth_request_set $open_status $upstream_http_x_token_status;
                auth_request_set $open_resource $upstream_http_x_token_resource;
                auth_request_set $open_mvpd $upstream_http_x_token_mvpd;
                add_header X-Token-Status $open_status always;
                add_header X-Got-Resource $open_resource;
                add_header X-Got-Mvpd $open_mvpd;
                proxy_set_header X-Token-Resource $open_resource;
                proxy_set_header X-Token-Mvpd $open_mvpd;
                proxy_pass http://media_origin;
            }
            # A location whose proxy forgets the resource header.
            location = /_tokengate_noresource {
                internal;
                proxy_pass http://tokengate/v1/auth-request;
                proxy_pass_request_body off;
                proxy_set_header Content-Length "";
                proxy_set_header X-Original-URI $request_uri;
            }
            location /noresource/ {
                auth_request /_tokengate_noresource;
                auth_request_set $noresource_status $upstream_http_x_token_status;
                add_header X-Token-Status $noresource_status always;
            }
        }
        """
    }

    /// docs/DESIGN.md#cat-at-the-origin: behind a CAT-issuing CDN, the
    /// shipped site passes the CAT header, the viewer's address, the
    /// original method and host to the gate, and a segment plays on the CAT.
    @Test func aSegmentPlaysOnACommonAccessTokenInItsHeader() async throws {
        try await withStack(gateArguments: ["--cat-key", "\(CATGateFixtures.hmacPath) edge-1", "--client-ip-header", "X-Real-IP"]) { stack in
            let now = CATGateFixtures.seconds(stack.clock.read())
            let cat = CATGateFixtures.token(
                now: now,
                [
                    CATGateFixtures.catnip([127, 0, 0, 1]), CATGateFixtures.claim(.catm, .array([.text("GET")])),
                    CATGateFixtures.claim(.catreplay, .integer(1)),
                ]
            )
            let allowed = try await stack.get("/hls/tnt/seg1.ts", headers: [("CTA-Common-Access-Token", cat)])
            #expect(allowed.status == 200, "\(allowed["X-Token-Reason"] ?? "")\n\(stack.nginx.errorLog)")
            #expect(allowed.body == "segment one")
            #expect(allowed["X-Seen-Token-Kind"] == "cat")
            #expect(allowed["X-Seen-Token-Status"] == "VALID_TOKEN")
            let again = try await stack.get("/hls/tnt/seg2.ts", headers: [("CTA-Common-Access-Token", cat)])
            #expect(again.status == 403)
            #expect(again["X-Token-Status"] == "TOKEN_REPLAYED")
            let otherFolder = CATGateFixtures.token(now: now, [CATGateFixtures.catu(.path, .prefix, "/hls/cnn/")])
            let refused = try await stack.get("/hls/tnt/seg1.ts", headers: [("CTA-Common-Access-Token", otherFolder)])
            #expect(refused.status == 403)
            #expect(refused["X-Token-Status"] == "URL_NOT_COVERED")
            let elsewhere = CATGateFixtures.token(now: now, [CATGateFixtures.catnip([192, 0, 2, 1])])
            let wrongIP = try await stack.get("/hls/tnt/seg1.ts", headers: [("CTA-Common-Access-Token", elsewhere)])
            #expect(wrongIP["X-Token-Status"] == "IP_MISMATCH")
            #expect(!stack.accessLog.joined().contains(cat), "the access log holds a CAT")
        }
    }

    /// docs/CDN.md#renewal-catr: a CAT in its catr window comes back renewed
    /// through the shipped site, as the header or as Set-Cookie, and the
    /// renewal verifies with python-cwt (its new cti, exp = now + expadd).
    @Test func aCATInItsRenewalWindowComesBackRenewedThroughNginx() async throws {
        try await withStack(gateArguments: ["--cat-key", "\(CATGateFixtures.hmacPath) edge-1"]) { stack in
            // Wall-clock time, so that python-cwt, which judges exp by its own clock, agrees.
            stack.clock.set(TokenTimestamp(millisecondsSince1970: Int64(Date().timeIntervalSince1970) * 1000)!)
            let now = CATGateFixtures.seconds(stack.clock.read())
            func renewable(_ renewal: CATRenewal) -> String {
                CATGateFixtures.token(now: now - 550, [CATGateFixtures.claim(.catr, renewal.claimValue)])
            }
            let original = renewable(CATRenewal(type: .header, expAdd: 900))
            let byHeader = try await stack.get("/hls/tnt/seg1.ts", headers: [("CTA-Common-Access-Token", original)])
            #expect(byHeader.status == 200 && byHeader.body == "segment one", "\(stack.nginx.errorLog)")
            let renewed = try #require(byHeader["CTA-Common-Access-Token"])
            #expect(renewed != original)
            #expect(try UnverifiedCommonAccessToken(text: renewed).token.expires == now + 900)

            let byCookie = try await stack.get("/hls/tnt/seg2.ts", headers: [("Cookie", "cat=\(renewable(CATRenewal(type: .cookie, expAdd: 600)))")])
            #expect(byCookie.status == 200 && byCookie.body == "segment two")
            let setCookie = try #require(byCookie.all("Set-Cookie").first { $0.hasPrefix("cat=") })
            #expect(setCookie.contains("; Path=/; Max-Age=600; HttpOnly; SameSite=Lax") && !setCookie.contains("Secure"), "plain http")
            #expect(byCookie["CTA-Common-Access-Token"] == nil)

            // A fresh CAT is not in its window: nothing comes back.
            let fresh = try await stack.get("/hls/tnt/seg1.ts", headers: [("CTA-Common-Access-Token", renewed)])
            #expect(fresh.status == 200 && fresh["CTA-Common-Access-Token"] == nil && fresh.all("Set-Cookie").isEmpty)
            #expect(!stack.accessLog.joined().contains(renewed) && !stack.gateLogs.all.contains { $0.contains(renewed) })

            guard IndependentPython.has(["cwt", "cbor2"]) || Integration.required else { return }
            let script = #"""
                import sys, json, base64, cwt
                from cwt import COSEKey
                token, keyfile = sys.argv[1], sys.argv[2]
                raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
                key = COSEKey.from_symmetric_key(bytes.fromhex(open(keyfile).read().strip()), alg="HS256", kid="edge-1")
                claims = cwt.decode(raw, key)
                print(json.dumps({str(k): (v.hex() if isinstance(v, bytes) else v) for k, v in claims.items() if k in (4, 6, 7)}))
                """#
            let output = try IndependentPython.run(script, arguments: [renewed, CATGateFixtures.hmacPath])
            let claims = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any], "\(output)")
            let before = try UnverifiedCommonAccessToken(text: original).token
            #expect((claims["4"] as? NSNumber)?.int64Value == now + 900)
            #expect((claims["6"] as? NSNumber)?.int64Value == now)
            #expect(
                (claims["7"] as? String)?.count == 32 && claims["7"] as? String != before.cti.map { $0.map { String(format: "%02x", $0) }.joined() }
            )
        }
    }

    @Test func everyStatusThroughNginxAndTheValuesReachTheOrigin() async throws {
        try await withStack { stack in
            let token = GateFixtures.token()
            let allowed = try await stack.get("/hls/tnt/master.m3u8?token=\(token)")
            #expect(allowed.status == 200, "\(stack.nginx.errorLog)")
            #expect(allowed.body.hasPrefix("#EXTM3U"))
            #expect(allowed["X-Token-Status"] == "VALID_TOKEN")
            #expect(allowed["X-Seen-Token-Status"] == "VALID_TOKEN")
            #expect(allowed["X-Seen-Token-Kind"] == "media")
            #expect(allowed["X-Seen-Token-Requestor"] == "TNT")
            #expect(allowed["X-Seen-Token-Resource"] == "TNT")
            #expect(allowed["X-Seen-Token-Mvpd"] == "Comcast_SSO")
            #expect(allowed["X-Seen-Token-Expires"] == "2016-03-17T22:08:31Z")

            let cases: [(String, Int, String)] = [
                ("/hls/tnt/seg1.ts?token=\(token)", 403, "TOKEN_REPLAYED"),
                ("/hls/tnt/seg1.ts", 401, "NO_TOKEN"),
                ("/hls/tnt/seg1.ts?token=garbage", 401, "INVALID_TOKEN_FORMAT"),
                ("/hls/tnt/seg1.ts?token=\(GateFixtures.token(key: GateFixtures.untrustedKey))", 403, "INVALID_SIGNATURE"),
                ("/hls/tnt/seg1.ts?token=\(GateFixtures.token(GateFixtures.request(requestor: "CNN")))", 403, "INVALID_REQUESTOR_ID"),
                ("/hls/cnn/seg1.ts?token=\(GateFixtures.token())", 403, "INVALID_RESOURCE_ID"),
                ("/hls/cnn/seg1.ts?auth=\(GateFixtures.token(GateFixtures.request(resource: "CNN")))", 200, "VALID_TOKEN"),
            ]
            for (target, status, tokenStatus) in cases {
                let answer = try await stack.get(target)
                #expect(answer.status == status, "\(target)\n\(stack.nginx.errorLog)")
                #expect(answer["X-Token-Status"] == tokenStatus, "\(target)")
                Self.expectNoInternals(answer, target)
                if status != 200 {
                    #expect(answer["X-Seen-Token-Kind"] == nil, "a refusal reached the origin")
                    #expect(answer["Set-Cookie"] == nil)
                }
            }
            let noResource = try await stack.get("/noresource/a.ts?token=\(GateFixtures.token())", extra: true)
            #expect(noResource.status == 500)
            #expect(noResource["X-Token-Status"] == "NO_EXPECTED_RESOURCE")
            // 503 from the gate through a bare auth_request location (not the shipped site's):
            // nginx answers 500, never an allow.
            let unavailable = try await stack.get("/open/a.ts?token=\(GateFixtures.token())", extra: true)
            #expect(unavailable.status == 500)
            #expect(unavailable.body.contains("open location") == false)

            stack.clock.set(GateFixtures.at(420_000 + 30_001))
            let expired = try await stack.get("/hls/tnt/seg1.ts?token=\(GateFixtures.token())")
            #expect(expired.status == 401)
            #expect(expired["X-Token-Status"] == "TOKEN_EXPIRED")
            stack.clock.set(GateFixtures.at(-30_001))
            let early = try await stack.get("/hls/tnt/seg1.ts?token=\(GateFixtures.token())")
            #expect(early.status == 401)
            #expect(early["X-Token-Status"] == "TOKEN_NOT_YET_VALID")
        }
    }

    @Test func aProxyCacheOnTheAuthLocationNeverLetsAReplayThrough() async throws {
        try await withStack { stack in
            let token = GateFixtures.token()
            let first = try await stack.get("/cached/a.ts?token=\(token)", extra: true)
            #expect(first.status == 200, "\(stack.nginx.errorLog)")
            #expect(first["X-Token-Status"] == "VALID_TOKEN")
            for _ in 0..<3 {
                let again = try await stack.get("/cached/a.ts?token=\(token)", extra: true)
                #expect(again.status == 403)
                #expect(again["X-Token-Status"] == "TOKEN_REPLAYED")
            }
        }
    }

    @Test func anHLSPlaylistAndItsSegmentsPlayOnTheSessionCookie() async throws {
        try await withStack { stack in
            // The client's own scheme and cookie path are not the site's: nginx replaces both.
            let master = try await stack.get(
                "/hls/tnt/master.m3u8?token=\(GateFixtures.token())",
                headers: [("X-Forwarded-Proto", "https"), ("X-Token-Cookie-Path", "/")]
            )
            #expect(master.status == 200, "\(stack.nginx.errorLog)")
            Self.expectNoInternals(master, "the answer that opens a session")
            // The gate's cookie, whole: the channel's path, the gate's session lifetime, and no
            // Secure on plain HTTP (a browser drops a Secure cookie set over http://).
            let session = try #require(master["X-Token-Session"], "the credential for players without cookies")
            #expect(master["Set-Cookie"] == "tokengate_session=\(session); Path=/hls/tnt/; Max-Age=600; HttpOnly; SameSite=Lax")
            #expect(master.all("Set-Cookie").count == 1)
            #expect(master["Cache-Control"] == "no-store, private")
            let pair = "tokengate_session=\(session)"
            for segment in ["seg1.ts", "seg2.ts", "master.m3u8"] {
                let answer = try await stack.get("/hls/tnt/\(segment)", headers: [("Cookie", pair)])
                #expect(answer.status == 200, "\(segment)")
                #expect(answer["X-Token-Status"] == "VALID_SESSION")
                #expect(answer["X-Seen-Token-Kind"] == "session")
                #expect(answer["Set-Cookie"] == nil)
                #expect(answer["X-Token-Session"] == nil)
                #expect(answer["Cache-Control"] == "no-store, private")
                Self.expectNoInternals(answer, segment)
            }
            // The same credential in the header (a web player on another origin) and nothing of it at the origin.
            let byHeader = try await stack.get("/hls/tnt/seg1.ts", headers: [("X-Token-Session", session)])
            #expect(byHeader.status == 200)
            #expect(byHeader["X-Token-Status"] == "VALID_SESSION")
            #expect(byHeader["X-Seen-Token-Kind"] == "session")
            let without = try await stack.get("/hls/tnt/seg1.ts")
            #expect(without.status == 401)
            #expect(without["X-Token-Status"] == "NO_TOKEN")
            let otherResource = try await stack.get("/hls/cnn/seg1.ts", headers: [("Cookie", pair)])
            #expect(otherResource.status == 403)
            #expect(otherResource["X-Token-Status"] == "INVALID_SESSION")
            stack.clock.advance(600_001)
            let expired = try await stack.get("/hls/tnt/seg2.ts", headers: [("Cookie", pair)])
            #expect(expired.status == 401)
            #expect(expired["X-Token-Status"] == "SESSION_EXPIRED")
        }
    }

    @Test func hostileTokenFieldsCannotInjectAHeaderThroughNginx() async throws {
        try await withStack { stack in
            let token = GateFixtures.hostileToken(
                resource: "TNT\r\nX-Injected: 1\r\n\r\n<html>é\u{202E}",
                mvpd: "MVPD\nSet-Cookie: stolen=1"
            )
            let answer = try await stack.get("/open/a.ts?token=\(token)", extra: true)
            #expect(answer.status == 200, "\(stack.nginx.errorLog)")
            #expect(answer.body == "open location")
            #expect(answer["X-Injected"] == nil)
            #expect(answer["Set-Cookie"] == nil)
            let resource = try #require(answer["X-Got-Resource"])
            #expect(resource == "TNT%0D%0AX-Injected:%201%0D%0A%0D%0A<html>%C3%A9%E2%80%AE", "\(resource)")
            #expect(answer["X-Seen-Token-Resource"] == resource, "the origin got another value")
            #expect(answer["X-Got-Mvpd"] == "MVPD%0ASet-Cookie:%20stolen=1")
            #expect(answer.rawHead.allSatisfy { $0 == 0x0D || $0 == 0x0A || ($0 >= 0x20 && $0 < 0x7F) })
        }
    }

    /// The gate's internal headers (docs/DESIGN.md#endpoints-and-answers) never reach a client of the shipped site.
    static func expectNoInternals(
        _ answer: RawHTTP.Answer,
        _ what: String,
        sourceLocation: Testing.SourceLocation = #_sourceLocation
    ) {
        #expect(answer["X-Token-Reason"] == nil, "X-Token-Reason reached the client: \(what)", sourceLocation: sourceLocation)
        #expect(answer["X-Token-Set-Cookie"] == nil, "X-Token-Set-Cookie reached the client: \(what)", sourceLocation: sourceLocation)
    }

    /// The site's access-log line of the request whose target is `target` (the last one, polled briefly).
    static func logged(_ stack: Stack, _ target: String) async throws -> TokenGateLogLine? {
        for _ in 0..<20 {
            let request = "GET \(TokenGateLogLine.redacted(target)) HTTP/1.1"
            if let line = stack.accessLog.reversed().compactMap(TokenGateLogLine.init).first(where: { $0.request == request }) {
                return line
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        return nil
    }

    @Test func theOriginNeverSeesTheGatesCredentialsAndKeepsEveryOtherParameter() async throws {
        try await withStack { stack in
            // `auth` holds the same raw bytes as `token` (not ambiguous); `tgs` is no session, so the token decides.
            let token = GateFixtures.token()
            let start = try await stack.get("/hls/tnt/master.m3u8?token=\(token)&x=1&tgs=not-a-session&auth=\(token)")
            #expect(start.status == 200, "\(stack.nginx.errorLog)")
            #expect(start["X-Token-Status"] == "VALID_TOKEN")
            #expect(start.body.hasPrefix("#EXTM3U"))
            Self.expectNoInternals(start, "an allow")
            #expect(stack.originRequests.last == "GET /hls/tnt/master.m3u8?x=1 HTTP/1.1", "\(stack.originRequests)")

            // A segment on the session parameter: every other parameter, in order, byte for byte.
            let cookie = try #require(start["Set-Cookie"])
            let session = try #require(cookie.split(separator: ";").first?.split(separator: "=", maxSplits: 1).last)
            let segment = try await stack.get("/hls/tnt/seg1.ts?b=2&tgs=\(session)&a=%41&c&tokens=kept&TGS=\(session)")
            #expect(segment.status == 200)
            #expect(segment["X-Token-Status"] == "VALID_SESSION")
            Self.expectNoInternals(segment, "a session allow")
            #expect(stack.originRequests.last == "GET /hls/tnt/seg1.ts?b=2&a=%41&c&tokens=kept HTTP/1.1", "\(stack.originRequests)")
            // No request line the origin recorded holds a credential.
            let origin = stack.originRequests
            #expect(origin.count == 2, "\(origin)")
            for line in origin {
                let query = line.split(separator: "?", maxSplits: 1).dropFirst().first ?? ""
                for pair in query.split(separator: "&") {
                    let name = pair.split(separator: "=", maxSplits: 1).first.map { $0.lowercased() } ?? ""
                    #expect(!["token", "auth", "tgs"].contains(name), "the origin got \(pair) in \(line)")
                }
                #expect(!line.contains(token), "the origin got the token: \(line)")
                #expect(!line.contains(String(session)), "the origin got the session: \(line)")
            }
        }
    }

    /// The access log keeps the path and every parameter but the credentials, whose values read REDACTED; a query
    /// with more credentials than the site's maps replace is withheld whole. Neither log holds a credential.
    @Test func noLogHoldsACredential() async throws {
        try await withStack { stack in
            let token = GateFixtures.token()
            let start = try await stack.get("/hls/tnt/master.m3u8?token=\(token)&x=1")
            #expect(start.status == 200)
            let session = try #require(start["X-Token-Session"])
            let untrusted = GateFixtures.token(key: GateFixtures.untrustedKey)
            let cases: [(target: String, logged: String)] = [
                ("/hls/tnt/seg1.ts?x=1&tgs=\(session)", "/hls/tnt/seg1.ts?x=1&tgs=REDACTED"),
                ("/hls/tnt/seg2.ts?token=\(token)", "/hls/tnt/seg2.ts?token=REDACTED"),
                ("/hls/tnt/seg3.ts?AUTH=\(untrusted)&y=2", "/hls/tnt/seg3.ts?AUTH=REDACTED&y=2"),
                (
                    "/hls/tnt/seg4.ts?cat=2D3RhEOhAQWhBFBrZXk&hdnts=exp%3D9~hmac%3Dab&Signature=c2ln&Key-Pair-Id=K1&md5=bWQ1&expires=9",
                    "/hls/tnt/seg4.ts?cat=REDACTED&hdnts=REDACTED&Signature=REDACTED&Key-Pair-Id=K1&md5=REDACTED&expires=9"
                ),
                ("/hls/tnt/seg5.ts?tokenx=1&xtoken=2&token", "/hls/tnt/seg5.ts?tokenx=1&xtoken=2&token"),
                ("/hls/tnt/seg6.ts?token=\(token)&auth=\(token)&tgs=\(session)&cat=c&token=\(untrusted)", "/hls/tnt/seg6.ts?WITHHELD"),
            ]
            for (target, logged) in cases {
                _ = try await stack.get(target)
                #expect(TokenGateLogLine.redacted(target) == logged || logged.hasSuffix("?WITHHELD"), "the tests' reading of the rule")
                var line: TokenGateLogLine?
                for _ in 0..<20 where line == nil {
                    line = stack.accessLog.compactMap(TokenGateLogLine.init).first { $0.request == "GET \(logged) HTTP/1.1" }
                    if line == nil { try await Task.sleep(for: .milliseconds(50)) }
                }
                #expect(line != nil, "no access-log line reads GET \(logged): \(stack.accessLog.suffix(3))")
            }
            let secrets = [token, untrusted, session, "2D3RhEOhAQWhBFBrZXk", "exp%3D9~hmac%3Dab", "c2ln", "bWQ1"]
            for secret in secrets {
                for line in stack.accessLog + stack.gateLogs.all {
                    #expect(!line.contains(secret), "a credential in a log: \(line)")
                }
            }
        }
    }

    /// One trace id finds a request in both logs: the player's `traceparent`,
    /// or the trace the site starts from its request id (docs/DESIGN.md#trace-context).
    @Test func oneTraceIDFindsARequestInBothLogs() async throws {
        try await withStack { stack in
            let forged = GateFixtures.token(key: GateFixtures.untrustedKey)
            let given = "4bf92f3577b34da6a3ce929d0e0e4736"
            let traced = try await stack.get("/hls/tnt/a.ts?token=\(forged)&n=1", headers: [("traceparent", "00-\(given)-00f067aa0ba902b7-01")])
            #expect(traced.status == 403)
            let untraced = try await stack.get("/hls/tnt/a.ts?token=\(forged)&n=2")
            #expect(untraced.status == 403)
            func accessTrace(_ marker: String) async throws -> String? {
                for _ in 0..<20 {
                    if let line = stack.accessLog.first(where: { $0.contains("&n=\(marker) ") }),
                        let match = line.firstMatch(of: /trace_id=([0-9a-f]{32})$/)
                    {
                        return String(match.1)
                    }
                    try await Task.sleep(for: .milliseconds(50))
                }
                return nil
            }
            #expect(try await accessTrace("1") == given, "\(stack.accessLog.suffix(2))")
            let started = try #require(try await accessTrace("2"), "\(stack.accessLog.suffix(2))")
            #expect(started != given)
            let refusals = stack.gateLogs.all.filter { $0.contains(" refused ") }
            #expect(refusals.contains { $0.contains("trace_id=\(given)") }, "\(refusals)")
            #expect(refusals.contains { $0.contains("trace_id=\(started)") }, "the site's trace \(started) is not in \(refusals)")
        }
    }

    @Test func aPathTheOriginCouldReadAnotherWayIsRefusedBeforeTheGateAsks() async throws {
        try await withStack { stack in
            let token = GateFixtures.token()
            let paths = [
                #"/hls/tnt/..;/cnn/seg1.ts"#, "/hls/tnt/%2e%2e/cnn/seg1.ts", "/hls/tnt/%2E./cnn/seg1.ts",
                "/hls/tnt/./seg1.ts", "/hls/tnt/a%2Fb.ts", "/hls/tnt/a%2fb.ts", "/hls/tnt/a%5cb.ts", "/hls/tnt/a%5Cb.ts",
                "/hls/tnt/a%3Bb.ts", "/hls/tnt/a;b.ts", #"/hls/tnt/a\b.ts"#, #"/hls/tnt/..\..\cnn\seg1.ts"#,
            ]
            for path in paths {
                let answer = try await stack.get("\(path)?token=\(token)")
                #expect(answer.status == 400, "\(path): \(answer.status)")
                #expect(answer["X-Token-Status"] == "BAD_REQUEST", "\(path)")
                #expect(!answer.body.contains("segment"), "\(path) was served")
                Self.expectNoInternals(answer, path)
            }
            #expect(stack.originRequests.isEmpty, "the origin got \(stack.originRequests)")
            // The gate was never asked: the same token still starts playback.
            let play = try await stack.get("/hls/tnt/seg1.ts?token=\(token)")
            #expect(play.status == 200, "the refused requests spent the token: \(play.status) \(play["X-Token-Status"] ?? "-")")
            #expect(play["X-Token-Status"] == "VALID_TOKEN")
            #expect(play.body == "segment one")
            #expect(stack.originRequests == ["GET /hls/tnt/seg1.ts HTTP/1.1"])
            // Names that merely resemble a dot segment are paths like any other.
            let dots = try await stack.get("/hls/tnt/...ts?token=\(GateFixtures.token())")
            #expect(dots.status == 404)
            #expect(dots["X-Token-Status"] == "VALID_TOKEN")
            let line = try await Self.logged(stack, "/hls/tnt/..;/cnn/seg1.ts?token=\(token)")
            #expect(line?.status == 400)
            #expect(line?.tokenStatus == "BAD_REQUEST")
            #expect(line?.gate == "-", "the gate was asked")
        }
    }

    @Test func theGatesReasonIsLoggedAndNeverReachesTheClient() async throws {
        try await withStack { stack in
            let token = GateFixtures.token()
            let cases: [(String, Int, String)] = [
                ("/hls/tnt/seg1.ts?token=\(token)", 200, "VALID_TOKEN"),
                ("/hls/tnt/seg2.ts?token=\(token)", 403, "TOKEN_REPLAYED"),
                ("/hls/tnt/seg1.ts", 401, "NO_TOKEN"),
                ("/hls/tnt/seg1.ts?token=\(GateFixtures.token(key: GateFixtures.untrustedKey))", 403, "INVALID_SIGNATURE"),
                ("/hls/tnt/seg1.ts?token=\(GateFixtures.token())&auth=\(GateFixtures.token())", 400, "BAD_REQUEST"),
            ]
            for (target, status, tokenStatus) in cases {
                let answer = try await stack.get(target)
                #expect(answer.status == status, "\(target): \(answer.status)")
                #expect(answer["X-Token-Status"] == tokenStatus, "\(target)")
                Self.expectNoInternals(answer, tokenStatus)
                let logged = try await Self.logged(stack, target)
                #expect(logged != nil, "no access-log line for \(tokenStatus): \(stack.accessLog)")
                guard let line = logged else { continue }
                #expect(line.status == status)
                #expect(line.gate == "\(status)", "the gate's own status, logged")
                #expect(line.tokenStatus == tokenStatus)
                // The reason the gate sends is the one logged. Asked directly, the gate answers the same
                // (the allow's token is spent by now: it answers TOKEN_REPLAYED, so only "a reason" is compared).
                let direct = try await RawHTTP.fetch(
                    port: stack.gatePort,
                    "/v1/auth-request",
                    headers: [("X-Original-URI", target), ("X-Token-Resource", "TNT")]
                )
                switch (direct["X-Token-Reason"], tokenStatus) {
                case (nil, _):
                    // A gate that sends no X-Token-Reason yet: nothing can be logged but the status.
                    #expect(line.reason == "", "\(tokenStatus): a reason the gate did not send")
                case (.some, "VALID_TOKEN"):
                    #expect(!line.reason.isEmpty, "the allow's reason was not logged")
                case (.some(let reason), _):
                    #expect(line.reason == reason, "\(tokenStatus): logged \(line.reason), the gate says \(reason)")
                }
            }
        }
    }

    @Test func outagesLookLikeOutages() async throws {
        try await withStack(gate: .unreachable) { stack in
            let target = "/hls/tnt/seg1.ts?token=\(GateFixtures.token())"
            for _ in 0..<2 {  // a refused connection, then nginx's "no live upstreams"
                let down = try await stack.get(target)
                #expect(down.status == 503, "\(stack.nginx.errorLog)")
                #expect(down["X-Token-Status"] == "GATE_UNAVAILABLE")
                #expect(down["Cache-Control"] == "no-store, private")
                #expect(!down.body.contains("segment"))
                Self.expectNoInternals(down, "gate down")
            }
            #expect(stack.originRequests.isEmpty)
            let line = try await Self.logged(stack, target)
            #expect(line?.status == 503)
            #expect(line?.tokenStatus == "GATE_UNAVAILABLE")
            #expect(line?.gate.hasPrefix("502") == true, "\(line?.gate ?? "no line")")
        }
        try await withStack(gate: .silent) { stack in
            let target = "/hls/tnt/seg1.ts?token=\(GateFixtures.token())"
            let hung = try await stack.get(target)
            #expect(hung.status == 503, "\(stack.nginx.errorLog)")
            #expect(hung["X-Token-Status"] == "GATE_UNAVAILABLE")
            #expect(!hung.body.contains("segment"))
            Self.expectNoInternals(hung, "gate hung")
            #expect(stack.originRequests.isEmpty)
            let line = try await Self.logged(stack, target)
            #expect(line?.tokenStatus == "GATE_UNAVAILABLE")
            #expect(line?.gate == "504", "\(line?.gate ?? "no line")")
        }
        try await withStack(gate: .refusingWrites) { stack in
            let target = "/hls/tnt/seg1.ts?token=\(GateFixtures.token())"
            let unavailable = try await stack.get(target)
            #expect(unavailable.status == 503, "\(stack.nginx.errorLog)")
            #expect(unavailable["X-Token-Status"] == "REPLAY_CHECK_UNAVAILABLE")
            #expect(!unavailable.body.contains("segment"))
            Self.expectNoInternals(unavailable, "replay store down")
            #expect(stack.originRequests.isEmpty)
            let line = try await Self.logged(stack, target)
            #expect(line?.status == 503)
            #expect(line?.gate == "503")
            #expect(line?.tokenStatus == "REPLAY_CHECK_UNAVAILABLE")
        }
    }

    @Test func oneLocationServesEveryChannelOfTheMap() async throws {
        try await withStack { stack in
            // CNN is a line of the map, not a location of its own: its resource and its cookie path.
            let cnn = try await stack.get("/hls/cnn/seg1.ts?token=\(GateFixtures.token(GateFixtures.request(resource: "CNN")))")
            #expect(cnn.status == 200, "\(stack.nginx.errorLog)")
            #expect(cnn["X-Token-Status"] == "VALID_TOKEN")
            #expect(cnn.body == "cnn segment")
            #expect(cnn["Set-Cookie"]?.contains("; Path=/hls/cnn/;") == true, "\(cnn["Set-Cookie"] ?? "no cookie")")
            let session = try #require(cnn["X-Token-Session"])
            let tnt = try await stack.get("/hls/tnt/seg1.ts", headers: [("Cookie", "tokengate_session=\(session)")])
            #expect(tnt.status == 403)
            #expect(tnt["X-Token-Status"] == "INVALID_SESSION")
            // A prefix the map does not name: the site answers, the gate is not asked, the token is not spent.
            let token = GateFixtures.token()
            let unknown = try await stack.get("/hls/nbc/seg1.ts?token=\(token)")
            #expect(unknown.status == 404)
            #expect(unknown["X-Token-Status"] == nil)
            Self.expectNoInternals(unknown, "an unknown channel")
            let line = try await Self.logged(stack, "/hls/nbc/seg1.ts?token=\(token)")
            #expect(line?.gate == "-", "the gate was asked: \(line?.gate ?? "no line")")
            let play = try await stack.get("/hls/tnt/seg1.ts?token=\(token)")
            #expect(play["X-Token-Status"] == "VALID_TOKEN")
        }
    }

    /// `curl -k` over the site's HTTPS listener: the status and header fields.
    static func httpsHead(port: Int, _ target: String, headers: [(String, String)] = []) throws -> RawHTTP.Answer {
        let curl = try #require(Browser.find(["curl"]), "curl is needed for the HTTPS listener (apt-get install curl)")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: curl)
        process.arguments =
            ["-sk", "-D", "-", "-o", "/dev/null", "--max-time", "10"]
            + headers.flatMap { ["-H", "\($0.0): \($0.1)"] } + ["https://127.0.0.1:\(port)\(target)"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let lines = String(decoding: data, as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else {
            throw RawHTTP.Failure(description: "curl: no answer from the HTTPS listener (\(process.terminationStatus))")
        }
        var fields: [(String, String)] = []
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        return RawHTTP.Answer(status: status, headers: fields, body: "", rawHead: Array(data))
    }

    @Test func overHTTPSTheSameSiteSetsASecureCookieWhateverTheClientClaims() async throws {
        let directory = GateFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let certificate = try #require(try ShippedNginxSite.selfSignedCertificate(in: directory), "openssl is needed for the HTTPS listener")
        try await withStack(tls: certificate) { stack in
            let httpsPort = try #require(stack.httpsPort)
            // A client that claims plain HTTP over TLS: the site sends the gate its own $scheme.
            let secure = try await offloaded {
                try Self.httpsHead(
                    port: httpsPort,
                    "/hls/tnt/master.m3u8?token=\(GateFixtures.token())",
                    headers: [("X-Forwarded-Proto", "http")]
                )
            }
            #expect(secure.status == 200, "\(stack.nginx.errorLog)")
            #expect(secure["X-Token-Status"] == "VALID_TOKEN")
            let session = try #require(secure["X-Token-Session"])
            #expect(secure["Set-Cookie"] == "tokengate_session=\(session); Path=/hls/tnt/; Max-Age=600; HttpOnly; SameSite=Lax; Secure")
            Self.expectNoInternals(secure, "HTTPS allow")
            let segment = try await offloaded {
                try Self.httpsHead(port: httpsPort, "/hls/tnt/seg1.ts", headers: [("Cookie", "tokengate_session=\(session)")])
            }
            #expect(segment.status == 200)
            #expect(segment["X-Token-Status"] == "VALID_SESSION")
            // The same server block on plain HTTP, whatever this client claims.
            let plain = try await stack.get("/hls/tnt/master.m3u8?token=\(GateFixtures.token())", headers: [("X-Forwarded-Proto", "https")])
            #expect(plain.status == 200)
            #expect(plain["Set-Cookie"]?.hasSuffix("; SameSite=Lax") == true, "\(plain["Set-Cookie"] ?? "no cookie")")
        }
    }

    static func options(_ stack: Stack, _ target: String, origin: String, requestHeaders: String = "x-token-session") async throws -> RawHTTP.Answer {
        try await offloaded {
            try RawHTTP.get(
                port: stack.port,
                target,
                headers: [
                    ("Origin", origin), ("Access-Control-Request-Method", "GET"),
                    ("Access-Control-Request-Headers", requestHeaders),
                ],
                method: "OPTIONS"
            )
        }
    }

    @Test func corsPreflightsAreTheSitesAndOnlyListedOriginsReadTheAnswers() async throws {
        try await withStack { stack in
            // A preflight, even one with a token in its query, is answered by nginx: the gate is not asked.
            let token = GateFixtures.token()
            let preflight = try await Self.options(stack, "/hls/tnt/seg1.ts?token=\(token)", origin: Self.playerOrigin)
            #expect(preflight.status == 204, "\(stack.nginx.errorLog)")
            #expect(preflight["Access-Control-Allow-Origin"] == Self.playerOrigin)
            #expect(preflight["Access-Control-Allow-Credentials"] == "true")
            #expect(preflight["Access-Control-Allow-Headers"]?.lowercased().contains("x-token-session") == true)
            #expect(preflight["Access-Control-Allow-Methods"]?.contains("GET") == true)
            #expect(preflight["X-Token-Status"] == nil)
            Self.expectNoInternals(preflight, "a preflight")
            let line = try await Self.logged(stack, "/hls/tnt/seg1.ts?token=\(token)")
            #expect(line == nil, "an OPTIONS line was read as a GET")
            let optionsLine = stack.accessLog.compactMap(TokenGateLogLine.init).first { $0.request.hasPrefix("OPTIONS ") }
            #expect(optionsLine?.status == 204)
            #expect(optionsLine?.gate == "-", "the preflight reached the gate: \(optionsLine?.gate ?? "no line")")
            #expect(stack.originRequests.isEmpty)

            // The listed origin reads the allow, the credential and the status.
            let allow = try await stack.get("/hls/tnt/master.m3u8?token=\(token)", headers: [("Origin", Self.playerOrigin)])
            #expect(allow.status == 200, "the preflight spent the token: \(allow["X-Token-Status"] ?? "-")")
            #expect(allow["Access-Control-Allow-Origin"] == Self.playerOrigin)
            let exposed = Set(
                (allow["Access-Control-Expose-Headers"] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            )
            #expect(exposed.isSuperset(of: ["x-token-session", "x-token-status"]), "\(exposed)")
            #expect(allow["X-Token-Session"] != nil)
            #expect(allow.all("Vary").contains { $0.contains("Origin") })
            Self.expectNoInternals(allow, "a cross-origin allow")
            // ... and a refusal's status.
            let refused = try await stack.get("/hls/tnt/seg1.ts", headers: [("Origin", Self.playerOrigin)])
            #expect(refused.status == 401)
            #expect(refused["Access-Control-Allow-Origin"] == Self.playerOrigin)
            #expect(refused["X-Token-Status"] == "NO_TOKEN")

            // Any other origin, however close to a listed one, gets no CORS permission at all.
            for origin in ["http://evil.test", "http://player.test:8000.evil.test", "null", "http://player.test", "https://player.test:8000"] {
                let other = try await Self.options(stack, "/hls/tnt/seg1.ts", origin: origin)
                #expect(other.status == 204)
                #expect(other["Access-Control-Allow-Origin"] == nil, "\(origin)")
                #expect(other["Access-Control-Allow-Credentials"] == nil, "\(origin)")
                let get = try await stack.get("/hls/tnt/seg1.ts", headers: [("Origin", origin)])
                #expect(get["Access-Control-Allow-Origin"] == nil, "\(origin)")
                #expect(get["Access-Control-Allow-Credentials"] == nil, "\(origin)")
            }
            // nginx matches map strings in any case; the answer is the listed origin, never the bytes sent.
            let upper = try await stack.get("/hls/tnt/seg1.ts", headers: [("Origin", Self.playerOrigin.uppercased())])
            #expect(upper["Access-Control-Allow-Origin"] != Self.playerOrigin.uppercased())
            // The shipped map lists its example origin, as itself, and nothing by default.
            let shipped = try String(contentsOf: ShippedNginxSite.directory.appendingPathComponent("tokengate.conf"), encoding: .utf8)
            let example = "\"\(ShippedNginxSite.exampleOrigin)\""
            let rules = shipped.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.hasPrefix("#") }
            #expect(rules.contains { $0.hasPrefix(example) && $0.hasSuffix("\(example);") })
            #expect(!rules.contains { $0.contains("$http_origin") && !$0.hasPrefix("map ") }, "an Origin echoed as it came")
        }
    }
}
