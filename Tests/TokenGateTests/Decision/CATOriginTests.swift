import CDNTokens
import EntitlementTokens
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import GateTestSupport
@testable import TokenGate

/// Common Access Tokens at the auth endpoints (docs/DESIGN.md#cat-at-the-origin):
/// each carrier, each status, catreplay through the replay store, and how a
/// CAT sits beside a media token or a session.
@Suite struct CATOriginTests {
    let clock = GateFixtures.Clock()
    var now: Int64 { CATGateFixtures.seconds(clock.read()) }

    static let catHeader = CATGateFixtures.header
    static let clientIP = HTTPField.Name("X-Real-IP")!

    /// A gate with the fixture HMAC key (kid edge-1) and ES256 key (kid edge-es).
    func withGate(
        _ extra: [String] = [],
        replay: ReplayStoreFactory.Made? = nil,
        logs: LogCapture = LogCapture(),
        _ body: @Sendable (any TestClientProtocol, GateRuntime) async throws -> Void
    ) async throws {
        let arguments = ["--cat-key", "\(CATGateFixtures.hmacPath) edge-1", "--cat-key", "\(CATGateFixtures.es256Path) edge-es"] + extra
        let runtime: GateRuntime
        if let replay {
            runtime = try GateRuntime(
                configuration: GateFixtures.configuration(arguments),
                logger: logs.logger,
                clock: { clock.read() },
                keyPollInterval: .seconds(60),
                replay: replay
            )
        } else {
            runtime = try GateFixtures.runtime(arguments, clock: clock, logs: logs)
        }
        try await runtime.application().test(.router) { client in try await body(client, runtime) }
    }

    func metrics(_ runtime: GateRuntime) -> String { String(decoding: runtime.metrics.render(), as: UTF8.self) }

    @Test func aValidCATInAnyCarrierAnswersLikeASessionAndIssuesNone() async throws {
        let directory = GateFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withGate(["--session-secret", GateFixtures.sessionSecret(in: directory)]) { client, runtime in
            let cat = CATGateFixtures.token(now: now)
            let answers = [
                try await client.authRequest("/hls/tnt/seg1.ts", headers: [Self.catHeader: cat]),
                try await client.authRequest("/hls/tnt/seg1.ts", headers: [.cookie: "other=1; cat=\(cat)"]),
                try await client.authRequest("/hls/tnt/seg1.ts?a=1&cat=\(cat)"),
            ]
            for answer in answers {
                #expect(answer.status == .ok, "\(answer["X-Token-Reason"] ?? "")")
                #expect(answer.tokenStatus == "VALID_TOKEN")
                #expect(answer["X-Token-Kind"] == "cat")
                #expect(answer["X-Token-Requestor"] == "cdn.example")
                #expect(answer["X-Token-Resource"] == "TNT")
                #expect(answer["X-Token-Mvpd"] == "")
                #expect(answer["X-Token-Expires"] == TokenTimestamp(millisecondsSince1970: (now + 600) * 1000)!.iso8601)
                #expect(answer["X-Token-Session"] == nil && answer["X-Token-Set-Cookie"] == nil, "a CAT is the session")
                #expect(answer["Cache-Control"] == "no-store")
            }
            // Signed with the ES256 key (kid edge-es): the kid selects it.
            let signed = try await client.authRequest(
                "/hls/tnt/seg2.ts",
                headers: [Self.catHeader: CATGateFixtures.token(now: now, key: CATGateFixtures.es256Key())]
            )
            #expect(signed.tokenStatus == "VALID_TOKEN")
            #expect(metrics(runtime).contains(#"tokengate_verdicts_total{status="VALID_TOKEN",kind="cat"} 4"#))
        }
    }

    @Test func eachRefusalHasItsStatusAndHTTPCode() async throws {
        try await withGate(["--cat-issuer", "cdn.example"]) { client, runtime in
            let other = CATGateFixtures.es256Key(id: "edge-es", path: CATGateFixtures.otherES256Path)
            let cases: [(String, String, HTTPResponse.Status, String, String)] = [
                ("expired", CATGateFixtures.token(now: now - 700), .unauthorized, "TOKEN_EXPIRED", "exp"),
                (
                    "not yet valid", CATGateFixtures.token(now: now, [CATGateFixtures.claim(.nbf, .integer(now + 120))]),
                    .unauthorized, "TOKEN_NOT_YET_VALID", "nbf"
                ),
                ("garbage", "not-a-cat!", .unauthorized, "INVALID_TOKEN_FORMAT", "CAT"),
                ("another key", CATGateFixtures.token(now: now, key: other), .forbidden, "INVALID_SIGNATURE", "signature"),
                (
                    "unknown kid", CATGateFixtures.token(now: now, key: CATGateFixtures.hmacKey(id: "edge-9")), .forbidden,
                    "INVALID_SIGNATURE", "edge-9"
                ),
                (
                    "another issuer", CATGateFixtures.token(now: now, [CATGateFixtures.claim(.iss, .text("evil.example"))]),
                    .forbidden, "INVALID_SIGNATURE", "iss"
                ),
                (
                    "another folder", CATGateFixtures.token(now: now, [CATGateFixtures.catu(.path, .prefix, "/hls/cnn/")]),
                    .forbidden, "URL_NOT_COVERED", "/hls/cnn/"
                ),
                (
                    "another method", CATGateFixtures.token(now: now, [CATGateFixtures.claim(.catm, .array([.text("POST")]))]),
                    .forbidden, "URL_NOT_COVERED", "catm"
                ),
                (
                    "bound to an IP, none known", CATGateFixtures.token(now: now, [CATGateFixtures.catnip([192, 0, 2, 1])]),
                    .forbidden, "IP_MISMATCH", "catnip"
                ),
                (
                    "geography", CATGateFixtures.token(now: now, [CATGateFixtures.claim(.catgeoiso3166, .array([.text("US")]))]),
                    .forbidden, "UNSUPPORTED_CLAIM", "catgeoiso3166"
                ),
                (
                    "headers", CATGateFixtures.token(now: now, [CATGateFixtures.claim(.cath, .map([]))]),
                    .forbidden, "UNSUPPORTED_CLAIM", "cath"
                ),
                (
                    "version 2", CATGateFixtures.token(now: now, [CATGateFixtures.claim(.catv, .integer(2))]),
                    .forbidden, "UNSUPPORTED_CLAIM", "catv"
                ),
                (
                    "one use, no cti", CATGateFixtures.token(now: now, [CATGateFixtures.claim(.catreplay, .integer(1))], removing: [.cti]),
                    .forbidden, "UNSUPPORTED_CLAIM", "cti"
                ),
            ]
            for (name, cat, status, tokenStatus, named) in cases {
                let answer = try await client.authRequest("/hls/tnt/seg1.ts", headers: [Self.catHeader: cat])
                #expect(answer.status == status, "\(name): \(answer["X-Token-Reason"] ?? "")")
                #expect(answer.tokenStatus == tokenStatus, "\(name): \(answer["X-Token-Reason"] ?? "")")
                // Each word named is visible ASCII, which X-Token-Reason keeps as it is.
                let reason = answer["X-Token-Reason"] ?? ""
                #expect(reason.contains(named), "\(name): \(reason)")
                #expect(answer["X-Token-Kind"] == nil, "\(name)")
            }
            let text = metrics(runtime)
            #expect(text.contains(#"tokengate_verdicts_total{status="URL_NOT_COVERED",kind="cat"} 2"#))
            #expect(text.contains(#"tokengate_verdicts_total{status="UNSUPPORTED_CLAIM",kind="cat"} 4"#))
            #expect(text.contains(#"tokengate_verdicts_total{status="IP_MISMATCH",kind="cat"} 1"#))
        }
    }

    /// `--cat-audience` names the audience this origin answers as: a CAT whose aud names it passes, one for
    /// another audience is refused, and without the option any aud is UNSUPPORTED_CLAIM (RFC 8392 §3.1.3).
    @Test func catAudienceJudgesTheAudClaim() async throws {
        let forUs = CATGateFixtures.token(now: now, [CATGateFixtures.claim(.aud, .array([.text("origin.example"), .text("other")]))])
        let forOthers = CATGateFixtures.token(now: now, [CATGateFixtures.claim(.aud, .text("other.example"))])
        try await withGate(["--cat-audience", "origin.example"]) { client, _ in
            let named = try await client.authRequest("/hls/tnt/seg1.ts", headers: [Self.catHeader: forUs])
            #expect(named.tokenStatus == "VALID_TOKEN", "\(named["X-Token-Reason"] ?? "")")
            let other = try await client.authRequest("/hls/tnt/seg1.ts", headers: [Self.catHeader: forOthers])
            #expect(other.status == .forbidden && other.tokenStatus == "INVALID_SIGNATURE", "\(other["X-Token-Reason"] ?? "")")
            let plain = try await client.authRequest("/hls/tnt/seg1.ts", headers: [Self.catHeader: CATGateFixtures.token(now: now)])
            #expect(plain.tokenStatus == "VALID_TOKEN", "a CAT without aud is for any audience")
        }
        try await withGate { client, _ in
            let unnamed = try await client.authRequest("/hls/tnt/seg1.ts", headers: [Self.catHeader: forUs])
            #expect(unnamed.tokenStatus == "UNSUPPORTED_CLAIM", "\(unnamed["X-Token-Reason"] ?? "")")
        }
        #expect(throws: (any Error).self) { try GateFixtures.configuration(["--cat-audience", "x"]) }
    }

    @Test func catuIsMatchedAgainstTheOriginalURIWithoutTheCATParameter() async throws {
        try await withGate { client, _ in
            let exact = CATGateFixtures.token(
                now: now,
                [
                    CATGateFixtures.claim(
                        .catu,
                        .map([
                            CBORMapEntry(.integer(CATURIComponent.path.rawValue), .map([CBORMapEntry(.integer(0), .text("/hls/tnt/seg1.ts"))])),
                            CBORMapEntry(.integer(CATURIComponent.query.rawValue), .map([CBORMapEntry(.integer(0), .text("a=1&b=2"))])),
                        ])
                    )
                ]
            )
            let inQuery = try await client.authRequest("/hls/tnt/seg1.ts?a=1&cat=\(exact)&b=2#frag?cat=x")
            #expect(inQuery.tokenStatus == "VALID_TOKEN", "\(inQuery["X-Token-Reason"] ?? "")")
            let otherQuery = try await client.authRequest("/hls/tnt/seg1.ts?a=1&b=3", headers: [Self.catHeader: exact])
            #expect(otherQuery.tokenStatus == "URL_NOT_COVERED")
            // The forward-auth convention: the URI in X-Forwarded-Uri.
            let forwarded = try await client.executeRequest(
                uri: "/v1/forward-auth",
                method: .get,
                headers: [
                    HTTPField.Name("X-Forwarded-Uri")!: "/hls/tnt/seg1.ts?a=1&b=2", HTTPField.Name("X-Token-Resource")!: "TNT",
                    Self.catHeader: exact,
                ],
                body: nil
            )
            #expect(forwarded.tokenStatus == "VALID_TOKEN")
            // A host restriction needs the proxy's X-Forwarded-Host; without it, it is not skipped.
            let hostBound = CATGateFixtures.token(now: now, [CATGateFixtures.catu(.host, .exact, "origin.example")])
            let noHost = try await client.authRequest("/hls/tnt/seg1.ts", headers: [Self.catHeader: hostBound])
            #expect(noHost.tokenStatus == "UNSUPPORTED_CLAIM")
            let rightHost = try await client.authRequest(
                "/hls/tnt/seg1.ts",
                headers: [
                    Self.catHeader: hostBound,
                    HTTPField.Name("X-Forwarded-Host")!: "origin.example",
                ]
            )
            #expect(rightHost.tokenStatus == "VALID_TOKEN")
            let wrongHost = try await client.authRequest(
                "/hls/tnt/seg1.ts",
                headers: [
                    Self.catHeader: hostBound,
                    HTTPField.Name("X-Forwarded-Host")!: "evil.example",
                ]
            )
            #expect(wrongHost.tokenStatus == "URL_NOT_COVERED")
        }
    }

    @Test func catmIsJudgedAgainstTheProxysOriginalMethod() async throws {
        try await withGate { client, _ in
            let getOnly = CATGateFixtures.token(now: now, [CATGateFixtures.claim(.catm, .array([.text("GET")]))])
            let defaultGet = try await client.authRequest("/hls/tnt/seg1.ts", headers: [Self.catHeader: getOnly])
            #expect(defaultGet.tokenStatus == "VALID_TOKEN")
            let reportedPost = try await client.authRequest(
                "/hls/tnt/seg1.ts",
                headers: [
                    Self.catHeader: getOnly,
                    HTTPField.Name("X-Forwarded-Method")!: "POST",
                ]
            )
            #expect(reportedPost.tokenStatus == "URL_NOT_COVERED")
            // Envoy forwards the original method itself.
            let envoyPost = try await client.executeRequest(
                uri: "/v1/ext-authz/hls/tnt/seg1.ts",
                method: .post,
                headers: [Self.catHeader: getOnly, HTTPField.Name("X-Token-Resource")!: "TNT"],
                body: nil
            )
            #expect(envoyPost.tokenStatus == "URL_NOT_COVERED")
            let envoyGet = try await client.executeRequest(
                uri: "/v1/ext-authz/hls/tnt/seg1.ts",
                method: .get,
                headers: [Self.catHeader: getOnly, HTTPField.Name("X-Token-Resource")!: "TNT"],
                body: nil
            )
            #expect(envoyGet.tokenStatus == "VALID_TOKEN")
            var doubled = HTTPFields()
            doubled.append(HTTPField(name: HTTPField.Name("X-Forwarded-Method")!, value: "GET"))
            doubled.append(HTTPField(name: HTTPField.Name("X-Forwarded-Method")!, value: "POST"))
            doubled[Self.catHeader] = getOnly
            let twoMethods = try await client.authRequest("/hls/tnt/seg1.ts", headers: doubled)
            #expect(twoMethods.status == .badRequest)
        }
    }

    @Test func catnipNeedsTheClientIPHeaderAndTwoOfItAre400() async throws {
        try await withGate(["--client-ip-header", "X-Real-IP"]) { client, _ in
            let bound = CATGateFixtures.token(now: now, [CATGateFixtures.catnip([192, 0, 2, 1])])
            let right = try await client.authRequest("/hls/tnt/seg1.ts", headers: [Self.catHeader: bound, Self.clientIP: "192.0.2.1"])
            #expect(right.tokenStatus == "VALID_TOKEN")
            let wrong = try await client.authRequest("/hls/tnt/seg1.ts", headers: [Self.catHeader: bound, Self.clientIP: "192.0.2.2"])
            #expect(wrong.status == .forbidden)
            #expect(wrong.tokenStatus == "IP_MISMATCH")
            let missing = try await client.authRequest("/hls/tnt/seg1.ts", headers: [Self.catHeader: bound])
            #expect(missing.tokenStatus == "IP_MISMATCH")
            var two = HTTPFields()
            two.append(HTTPField(name: Self.clientIP, value: "192.0.2.1"))
            two.append(HTTPField(name: Self.clientIP, value: "192.0.2.1"))
            two[Self.catHeader] = bound
            let doubled = try await client.authRequest("/hls/tnt/seg1.ts", headers: two)
            #expect(doubled.status == .badRequest)
            #expect(doubled.tokenStatus == "BAD_REQUEST")
        }
    }

    @Test func catreplayOneIsAllowedOnceAndTwoIsCountedAndLogged() async throws {
        let logs = LogCapture()
        try await withGate(logs: logs) { client, runtime in
            let once = CATGateFixtures.token(now: now, [CATGateFixtures.claim(.catreplay, .integer(1))])
            let first = try await client.authRequest("/hls/tnt/seg1.ts", headers: [Self.catHeader: once])
            #expect(first.tokenStatus == "VALID_TOKEN")
            let second = try await client.authRequest("/hls/tnt/seg2.ts?cat=\(once)")
            #expect(second.status == .forbidden)
            #expect(second.tokenStatus == "TOKEN_REPLAYED")

            let detected = CATGateFixtures.token(now: now, [CATGateFixtures.claim(.catreplay, .integer(2))])
            for _ in 0..<3 {
                let answer = try await client.authRequest("/hls/tnt/seg1.ts", headers: [Self.catHeader: detected])
                #expect(answer.tokenStatus == "VALID_TOKEN")
            }
            #expect(metrics(runtime).contains("tokengate_cat_reuse_total 2"))
            #expect(logs.all.filter { $0.contains("catreplay 2") }.count == 2, "\(logs.all)")
            #expect(!logs.all.contains { $0.contains(detected) }, "the log never holds a CAT")
            // Reuse permitted (no catreplay): the store is not asked.
            let permitted = CATGateFixtures.token(now: now)
            for _ in 0..<2 {
                #expect(try await client.authRequest("/hls/tnt/a.ts", headers: [Self.catHeader: permitted]).tokenStatus == "VALID_TOKEN")
            }
            #expect(metrics(runtime).contains(#"tokengate_replay_store_operations_total{outcome="accepted"} 2"#))
        }
    }

    /// A CAT of the standard claims issued `age` seconds ago (it lives 600 s)
    /// with `catr` as given; the default window is its last 60 s.
    func renewable(_ renewal: CATRenewal, age: Int64 = 550, _ extra: [CBORMapEntry] = [], key: CATKey = CATGateFixtures.hmacKey()) -> String {
        CATGateFixtures.token(now: now - age, [CATGateFixtures.claim(.catr, renewal.claimValue)] + extra, key: key)
    }

    @Test func aCATInItsRenewalWindowIsAnsweredWithARenewedOneWhereCatrSays() async throws {
        let logs = LogCapture()
        try await withGate(logs: logs) { client, runtime in
            // Type header, from a cookie: the header catr names; a new cti, iat = now, exp = now + expadd.
            let original = renewable(CATRenewal(type: .header, expAdd: 900, headerName: "X-Renewed-CAT"))
            let header = try await client.authRequest("/hls/tnt/seg1.ts", headers: [.cookie: "cat=\(original)"])
            #expect(header.tokenStatus == "VALID_TOKEN")
            let renewedText = try #require(header["X-Renewed-CAT"])
            #expect(header["X-Token-Set-Cookie"] == nil && header["Cache-Control"] == "no-store, private")
            #expect(header["X-Token-Reason"]?.removingPercentEncoding?.contains("renewed (catr header) as header X-Renewed-CAT") == true)
            let before = try UnverifiedCommonAccessToken(text: original).token
            let renewed = try UnverifiedCommonAccessToken(text: renewedText)
            #expect(renewed.token.cti != before.cti && renewed.token.cti?.count == 16)
            #expect(renewed.token.issuedAt == now && renewed.token.expires == now + 900)
            #expect(renewed.token.issuer == before.issuer && renewed.token.uriRestriction == before.uriRestriction)
            #expect(renewed.token.renewal == before.renewal)
            #expect(renewed.message.structure == .mac0 && renewed.message.keyID == Array("edge-1".utf8))
            // The renewed CAT is accepted in its turn.
            let next = try await client.authRequest("/hls/tnt/seg2.ts", headers: [Self.catHeader: renewedText])
            #expect(next.tokenStatus == "VALID_TOKEN" && next["X-Renewed-CAT"] == nil, "a fresh CAT is not in its window")

            // Type cookie: X-Token-Set-Cookie, which the shipped sites pass on as Set-Cookie.
            let cookie = try await client.authRequest(
                "/hls/tnt/seg1.ts",
                headers: [Self.catHeader: renewable(CATRenewal(type: .cookie, expAdd: 1200))]
            )
            let setCookie = try #require(cookie["X-Token-Set-Cookie"])
            #expect(setCookie.hasPrefix("cat=") && setCookie.hasSuffix("; Path=/; Max-Age=1200; HttpOnly; SameSite=Lax; Secure"))
            #expect(cookie["CTA-Common-Access-Token"] == nil)
            let fromCookie = try UnverifiedCommonAccessToken(text: String(setCookie.dropFirst(4).prefix { $0 != ";" }))
            #expect(fromCookie.token.expires == now + 1200)

            // automatic (and redirect, which an auth subrequest cannot do): the carrier it came in.
            for type in [CATRenewal.RenewalType.automatic, .redirect] {
                let token = renewable(CATRenewal(type: type, expAdd: 600))
                let byHeader = try await client.authRequest("/hls/tnt/a.ts", headers: [Self.catHeader: token])
                #expect(byHeader["CTA-Common-Access-Token"] != nil && byHeader["X-Token-Set-Cookie"] == nil)
                let byCookie = try await client.authRequest(
                    "/hls/tnt/a.ts",
                    headers: [.cookie: "cat=\(token)", HTTPField.Name("X-Forwarded-Proto")!: "http"]
                )
                #expect(byCookie["X-Token-Set-Cookie"]?.hasSuffix("SameSite=Lax") == true, "not Secure on plain http")
                let byQuery = try await client.authRequest("/hls/tnt/a.ts?cat=\(token)")
                #expect(byQuery["CTA-Common-Access-Token"] != nil, "a query cannot be rewritten: the header")
            }
            // ES256: the ES256 key signs its renewal.
            let signed = try await client.authRequest(
                "/hls/tnt/a.ts",
                headers: [Self.catHeader: renewable(CATRenewal(type: .header, expAdd: 600), key: CATGateFixtures.es256Key())]
            )
            let es256 = try UnverifiedCommonAccessToken(text: try #require(signed["CTA-Common-Access-Token"]))
            #expect(es256.message.structure == .sign1 && es256.message.keyID == Array("edge-es".utf8))

            #expect(metrics(runtime).contains("tokengate_cat_renewals_total 9"))
            #expect(!logs.all.contains { $0.contains(renewedText) || $0.contains(original) }, "the log never holds a CAT")
        }
    }

    @Test func outsideItsWindowOrWithoutASigningKeyACATIsNotRenewed() async throws {
        try await withGate { client, _ in
            for age: Int64 in [0, 539] {
                let answer = try await client.authRequest(
                    "/hls/tnt/a.ts",
                    headers: [Self.catHeader: renewable(CATRenewal(type: .header, expAdd: 600), age: age)]
                )
                #expect(answer.tokenStatus == "VALID_TOKEN" && answer["CTA-Common-Access-Token"] == nil)
            }
            // Past exp, within the leeway: accepted, and past its window (exp − deadline ≤ now < exp).
            let late = try await client.authRequest(
                "/hls/tnt/a.ts",
                headers: [Self.catHeader: renewable(CATRenewal(type: .header, expAdd: 600), age: 610)]
            )
            #expect(late.tokenStatus == "VALID_TOKEN" && late["CTA-Common-Access-Token"] == nil)
            // A header the gate's answer owns is never overwritten.
            let owned = try await client.authRequest(
                "/hls/tnt/a.ts",
                headers: [Self.catHeader: renewable(CATRenewal(type: .header, expAdd: 600, headerName: "X-Token-Status"))]
            )
            #expect(
                owned.tokenStatus == "VALID_TOKEN"
                    && owned["X-Token-Reason"]?.removingPercentEncoding?.contains("not renewed (catr): the header X-Token-Status") == true
            )
        }
        // Public keys only: the CAT is accepted, and nothing can sign its renewal.
        let runtime = try GateFixtures.runtime(
            ["--cat-key", "\(CATGateFixtures.directory.appendingPathComponent("es256-public.pem").path) edge-es"],
            clock: clock
        )
        try await runtime.application().test(.router) { client in
            let answer = try await client.authRequest(
                "/hls/tnt/a.ts",
                headers: [Self.catHeader: renewable(CATRenewal(type: .header, expAdd: 600), key: CATGateFixtures.es256Key())]
            )
            #expect(answer.tokenStatus == "VALID_TOKEN" && answer["CTA-Common-Access-Token"] == nil)
            #expect(answer["X-Token-Reason"]?.removingPercentEncoding?.contains("no --cat-key of its algorithm can sign") == true)
        }
    }

    @Test func aOneUseCATIsRenewedOnceAndItsRenewalIsOneUseToo() async throws {
        try await withGate { client, _ in
            let once = renewable(CATRenewal(type: .header, expAdd: 600), [CATGateFixtures.claim(.catreplay, .integer(1))])
            let first = try await client.authRequest("/hls/tnt/seg1.ts", headers: [Self.catHeader: once])
            let renewed = try #require(first["CTA-Common-Access-Token"])
            #expect(try UnverifiedCommonAccessToken(text: renewed).token.replay == .prohibited)
            let again = try await client.authRequest("/hls/tnt/seg2.ts", headers: [Self.catHeader: once])
            #expect(again.tokenStatus == "TOKEN_REPLAYED" && again["CTA-Common-Access-Token"] == nil)
            // A new cti: the renewal is accepted once, then replayed.
            #expect(try await client.authRequest("/hls/tnt/seg3.ts", headers: [Self.catHeader: renewed]).tokenStatus == "VALID_TOKEN")
            #expect(try await client.authRequest("/hls/tnt/seg4.ts", headers: [Self.catHeader: renewed]).tokenStatus == "TOKEN_REPLAYED")
        }
    }

    @Test func aStoreThatCannotAnswerIs503NeverAnAllowUnlessOpen() async throws {
        let once: @Sendable (Int64) -> String = { now in CATGateFixtures.token(now: now, [CATGateFixtures.claim(.catreplay, .integer(1))]) }
        try await withGate(["--replay-timeout", "20"], replay: .init(store: SilentReplayStore())) { client, _ in
            let answer = try await client.authRequest("/hls/tnt/seg1.ts", headers: [Self.catHeader: once(now)])
            #expect(answer.status == .serviceUnavailable)
            #expect(answer.tokenStatus == "REPLAY_CHECK_UNAVAILABLE")
            // catreplay 2 only detects: an unanswering store refuses nothing.
            let detected = CATGateFixtures.token(now: now, [CATGateFixtures.claim(.catreplay, .integer(2))])
            #expect(try await client.authRequest("/hls/tnt/a.ts", headers: [Self.catHeader: detected]).tokenStatus == "VALID_TOKEN")
        }
        try await withGate(["--replay-failure", "open"], replay: .init(store: RefusingReplayStore())) { client, runtime in
            let answer = try await client.authRequest("/hls/tnt/seg1.ts", headers: [Self.catHeader: once(now)])
            #expect(answer.tokenStatus == "VALID_TOKEN")
            #expect(metrics(runtime).contains("tokengate_replay_fail_open_total 1"))
        }
        try await withGate(["--replay", "off"]) { client, _ in
            let answer = try await client.authRequest("/hls/tnt/seg1.ts", headers: [Self.catHeader: once(now)])
            #expect(answer.tokenStatus == "UNSUPPORTED_CLAIM")
        }
    }

    @Test func aCATBesideATokenOrASessionFollowsTheValidOneWins() async throws {
        let directory = GateFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withGate(["--session-secret", GateFixtures.sessionSecret(in: directory)]) { client, _ in
            // Two different CATs read two ways; the same one twice does not.
            let cat = CATGateFixtures.token(now: now)
            let two = try await client.authRequest("/hls/tnt/a.ts?cat=\(cat)", headers: [Self.catHeader: CATGateFixtures.token(now: now)])
            #expect(two.status == .badRequest)
            #expect(two["X-Token-Reason"]?.contains("Common") == true)
            let same = try await client.authRequest("/hls/tnt/a.ts?cat=\(cat)", headers: [Self.catHeader: cat])
            #expect(same.tokenStatus == "VALID_TOKEN")

            // A valid CAT lets the request through and the media token beside it is not spent.
            let token = GateFixtures.token()
            let withCAT = try await client.authRequest("/hls/tnt/a.ts?token=\(token)", headers: [Self.catHeader: cat])
            #expect(withCAT["X-Token-Kind"] == "cat")
            #expect(withCAT["X-Token-Session"] == nil)
            let tokenAlone = try await client.authRequest("/hls/tnt/a.ts?token=\(token)")
            #expect(tokenAlone.tokenStatus == "VALID_TOKEN")
            #expect(tokenAlone["X-Token-Kind"] == "media")
            let session = try #require(tokenAlone["X-Token-Session"])

            // A refused CAT leaves the decision to the token.
            let fresh = GateFixtures.token()
            let expiredCAT = CATGateFixtures.token(now: now - 700)
            let tokenDecides = try await client.authRequest("/hls/tnt/a.ts?token=\(fresh)", headers: [Self.catHeader: expiredCAT])
            #expect(tokenDecides.tokenStatus == "VALID_TOKEN")
            #expect(tokenDecides["X-Token-Kind"] == "media")
            // Without a token, the CAT's refusal is the answer, before a session's.
            let catDecides = try await client.authRequest(
                "/hls/tnt/a.ts",
                headers: [Self.catHeader: expiredCAT, .cookie: "tokengate_session=forged"]
            )
            #expect(catDecides.tokenStatus == "TOKEN_EXPIRED")

            // A valid session wins and a one-use CAT beside it is not spent.
            let once = CATGateFixtures.token(now: now, [CATGateFixtures.claim(.catreplay, .integer(1))])
            let sessionWins = try await client.authRequest("/hls/tnt/a.ts", headers: [Self.catHeader: once, .cookie: "tokengate_session=\(session)"])
            #expect(sessionWins.tokenStatus == "VALID_SESSION")
            #expect(try await client.authRequest("/hls/tnt/a.ts", headers: [Self.catHeader: once]).tokenStatus == "VALID_TOKEN")
        }
    }

    @Test func withoutCATKeysACATIsNoCredential() async throws {
        let runtime = try GateFixtures.runtime(clock: clock)
        try await runtime.application().test(.router) { client in
            let answer = try await client.authRequest("/hls/tnt/a.ts", headers: [Self.catHeader: CATGateFixtures.token(now: now)])
            #expect(answer.tokenStatus == "NO_TOKEN")
            #expect(answer["X-Token-Reason"]?.contains("Common") == false)
        }
    }

    /// `--cat-key` files are read again on SIGHUP with the trusted keys: a
    /// rotated key verifies from the reload on, and a reload that meets a
    /// broken key file keeps the keys in use.
    @Test func catKeysReloadWithTheTrustedKeys() async throws {
        let directory = GateFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (runtime, keyFile) = try CATGateFixtures.gateWithRewritableKey(in: directory, clock: clock)
        let newHex = String(repeating: "5a", count: 32)
        let newKey = try CATKey(keyFile: Array(newHex.utf8), id: "edge-1", source: "rotated")
        try await runtime.application().test(.router) { client in
            func status(_ key: CATKey) async throws -> String? {
                try await client.authRequest("/hls/tnt/a.ts", headers: [Self.catHeader: CATGateFixtures.token(now: now, key: key)]).tokenStatus
            }
            #expect(try await status(CATGateFixtures.hmacKey()) == "VALID_TOKEN")
            #expect(try await status(newKey) == "INVALID_SIGNATURE")
            try Data(newHex.utf8).write(to: keyFile)
            #expect(runtime.reloader.reload(because: "test"))
            #expect(try await status(newKey) == "VALID_TOKEN")
            #expect(try await status(CATGateFixtures.hmacKey()) == "INVALID_SIGNATURE")
            try Data("not a key".utf8).write(to: keyFile)
            #expect(!runtime.reloader.reload(because: "test"))
            #expect(try await status(newKey) == "VALID_TOKEN")
        }
    }

    @Test func theConfigurationRefusesWhatCannotWork() throws {
        func refusal(_ arguments: [String]) -> String? {
            do {
                _ = try GateFixtures.runtime(arguments, clock: clock)
                return nil
            } catch { return "\(error)" }
        }
        #expect(refusal(["--cat-issuer", "x"])?.contains("--cat-key") == true)
        #expect(refusal(["--cat-key", "\(CATGateFixtures.hmacPath) edge-1", "--token-param", "cat"])?.contains("cat") == true)
        #expect(refusal(["--cat-key", "/nonexistent/cat.hex"])?.contains("/nonexistent/cat.hex") == true)
        #expect(refusal(["--cat-key", "\(GateFixtures.publicKey)"])?.contains("ES256") == true)
        #expect(refusal(["--cat-key", "a b c"])?.contains("FILE") == true)
        #expect(refusal(["--cat-key", CATGateFixtures.hmacPath, "--client-ip-header", "bad header"]) != nil)
    }
}
