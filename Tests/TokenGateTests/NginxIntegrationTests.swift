import EntitlementTokens
import Foundation
import HummingbirdTesting
import Testing
@testable import TokenGate

/// nginx in front of tokengate, with the shipped `deploy/nginx/tokengate.conf`
/// (ports substituted) and nginx itself as the media origin, echoing the
/// `X-Token-*` values it received as `X-Seen-Token-*`.
@Suite(.serialized, .enabled(if: Nginx.available,
                             "nginx is not installed (apt-get install nginx-light); TOKENINSPECT_INTEGRATION=require makes this a failure"))
struct NginxIntegrationTests {
    struct Stack: Sendable {
        var port: Int       // nginx, the shipped server block
        var extraPort: Int  // nginx, the test-only locations
        var clock: GateFixtures.Clock
        var nginx: Nginx

        func get(_ target: String, headers: [(String, String)] = [], extra: Bool = false) async throws -> RawHTTP.Answer {
            try await RawHTTP.fetch(port: extra ? extraPort : port, target, headers: headers)
        }
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

    func withStack(_ body: @Sendable (Stack) async throws -> Void) async throws {
        let clock = GateFixtures.Clock()
        let directory = GateFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let secret = GateFixtures.sessionSecret(in: directory)
        let gate = try GateFixtures.runtime(["--session-secret", secret, "--session-lifetime", "600"], clock: clock)
        // A second gate: any resource (for hostile resource ids) and a replay store that refuses every write.
        let open = try GateRuntime(
            configuration: GateFixtures.configuration(["--allow-any-resource"], base: ["--key", GateFixtures.publicKey, "--requestor", "TNT"]),
            logger: LogCapture().logger, clock: { clock.read() }, keyPollInterval: .seconds(60),
            replay: .init(store: RefusingReplayStore(), probe: { nil }))
        try await gate.application(port: 0).test(.live) { gateClient in
            try await open.application(port: 0).test(.live) { openClient in
                let port = try RawHTTP.freePort()
                let originPort = try RawHTTP.freePort()
                let extraPort = try RawHTTP.freePort()
                let shipped = try String(contentsOf: GateFixtures.repository.appendingPathComponent("deploy/nginx/tokengate.conf"),
                                         encoding: .utf8)
                let site = shipped
                    .replacingOccurrences(of: "server 127.0.0.1:8089;", with: "server 127.0.0.1:\(gateClient.port!);")
                    .replacingOccurrences(of: "server 127.0.0.1:8080;", with: "server 127.0.0.1:\(originPort);")
                    .replacingOccurrences(of: "listen 80;", with: "listen 127.0.0.1:\(port);")
                #expect(site != shipped)
                let http = site + Self.testServers(origin: originPort, extra: extraPort, open: openClient.port!)
                let nginx = try await offloaded { try Nginx(http: http, port: port, files: Self.files) }
                defer { nginx.stop() }
                try await body(Stack(port: port, extraPort: extraPort, clock: clock, nginx: nginx))
            }
        }
    }

    static func testServers(origin: Int, extra: Int, open: Int) -> String {
        """
        # The media origin: serves the files and echoes what it received.
        server {
            listen 127.0.0.1:\(origin);
            root {{prefix}}/www;
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
                #expect(answer.status == status, "\(target)")
                #expect(answer["X-Token-Status"] == tokenStatus, "\(target)")
                if status != 200 {
                    #expect(answer["X-Seen-Token-Kind"] == nil, "a refusal reached the origin")
                    #expect(answer["Set-Cookie"] == nil)
                }
            }
            let noResource = try await stack.get("/noresource/a.ts?token=\(GateFixtures.token())", extra: true)
            #expect(noResource.status == 500)
            #expect(noResource["X-Token-Status"] == "NO_EXPECTED_RESOURCE")
            // 503 from the gate: nginx answers an error, never an allow.
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
            let master = try await stack.get("/hls/tnt/master.m3u8?token=\(GateFixtures.token())")
            #expect(master.status == 200)
            let setCookie = try #require(master["Set-Cookie"])
            #expect(setCookie.hasPrefix("tokengate_session="))
            #expect(setCookie.contains("Path=/hls/tnt/"))
            #expect(setCookie.contains("HttpOnly"))
            let pair = String(setCookie.split(separator: ";")[0])
            for segment in ["seg1.ts", "seg2.ts", "master.m3u8"] {
                let answer = try await stack.get("/hls/tnt/\(segment)", headers: [("Cookie", pair)])
                #expect(answer.status == 200, "\(segment)")
                #expect(answer["X-Token-Status"] == "VALID_SESSION")
                #expect(answer["X-Seen-Token-Kind"] == "session")
                #expect(answer["Set-Cookie"] == nil)
            }
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
            let token = GateFixtures.hostileToken(resource: "TNT\r\nX-Injected: 1\r\n\r\n<html>é\u{202E}",
                                                  mvpd: "MVPD\nSet-Cookie: stolen=1")
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
}
