import CDNTokens
import EntitlementTokens
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import IntegrationSupport
import Testing

@testable import GateTestSupport
@testable import TokenGate

/// The CDN exchange, `POST` and `GET /v1/playback` (docs/DESIGN.md#the-cdn-exchange):
/// every kind's grant verifies with that kind's own reader, the media token is
/// spent once, and nothing is spent on a request refused before the token.
struct PlaybackExchangeTests {
    /// A folder with one profile of each kind and their keys; removed by the caller.
    struct Profiles {
        let directory: URL
        var paths: [String: String] = [:]
        let akamaiKey = "52a152a152a152a152a152a152a152a1"
        let catKey = "0123456789abcdef0123456789abcdef"
        let secret = "secure-link-secret-for-the-tests-0123456789"

        static let cloudFrontKey = GateFixtures.repository.appendingPathComponent(
            "Tests/CDNTokensTests/Fixtures/CloudFront/test-only-cloudfront-rsa2048.pem"
        ).path

        init() throws {
            directory = GateFixtures.temporaryDirectory()
            try write("akamai.key", akamaiKey + "\n")
            try write("cat.key", catKey + "\n")
            try write("secure-link.key", secret + "\n")
            paths["akamai"] = try write(
                "akamai.profile",
                """
                name = akamai-edge
                kind = akamai
                key = \(directory.path)/akamai.key
                resource = TNT https://akamai.media.test/hls/tnt/master.m3u8
                resource = CNN https://akamai.media.test/hls/cnn/master.m3u8
                lifetime = 600
                """
            )
            paths["cloudfront"] = try write(
                "cloudfront.profile",
                """
                name = cloudfront-edge
                kind = cloudfront
                key = \(Self.cloudFrontKey) K2JCJMDEHXQW5F
                resource = TNT https://d111111abcdef8.cloudfront.net/hls/tnt/master.m3u8
                """
            )
            paths["cat"] = try write(
                "cat.profile",
                """
                name = cat-edge
                kind = cat
                key = \(directory.path)/cat.key edge-key-1
                resource = TNT https://cat.media.test/hls/tnt/master.m3u8
                carrier = header
                issuer = tokengate-tests
                """
            )
            paths["nginx-secure-link"] = try write(
                "secure-link.profile",
                """
                name = nginx-edge
                kind = nginx-secure-link
                key = \(directory.path)/secure-link.key
                resource = TNT http://edge.media.test/hls/tnt/master.m3u8
                secure-link-md5 = $secure_link_expires$folder $secret
                """
            )
        }

        @discardableResult
        func write(_ name: String, _ text: String) throws -> String {
            let path = directory.appendingPathComponent(name).path
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            return path
        }
    }

    static func runtime(_ profiles: [String], clock: GateFixtures.Clock = .init(), logs: LogCapture = .init()) throws -> GateRuntime {
        try GateFixtures.runtime(profiles.flatMap { ["--cdn-profile", $0] }, clock: clock, logs: logs)
    }

    static func post(_ client: some TestClientProtocol, _ body: String, headers: HTTPFields = [:]) async throws -> TestResponse {
        var headers = headers
        if headers[.contentType] == nil { headers[.contentType] = "application/json" }
        return try await client.executeRequest(uri: "/v1/playback", method: .post, headers: headers, body: ByteBuffer(string: body))
    }

    static func json(_ response: TestResponse) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any]) ?? [:]
    }

    /// The facts an edge would check the grant against: the resource's URL, the test clock's time.
    static func facts(_ url: String, clock: GateFixtures.Clock) throws -> CDNRequestFacts {
        CDNRequestFacts(url: try CDNURL(parsing: url), now: clock.read().millisecondsSince1970 / 1000)
    }

    @Test(arguments: ["akamai", "cloudfront", "cat", "nginx-secure-link"])
    func aValidMediaTokenIsExchangedOnceAndTheGrantVerifiesWithItsKindsReader(kind: String) async throws {
        let profiles = try Profiles()
        defer { try? FileManager.default.removeItem(at: profiles.directory) }
        let clock = GateFixtures.Clock()
        let logs = LogCapture()
        let runtime = try Self.runtime([try #require(profiles.paths[kind])], clock: clock, logs: logs)
        try await runtime.application().test(.router) { client in
            let token = GateFixtures.token()
            let answer = try await Self.post(client, "{\"token\":\"\(token)\",\"resource\":\"TNT\"}")
            #expect(answer.status == .ok, "\(String(buffer: answer.body))")
            #expect(answer.headers[.init("X-Token-Status")!] == "VALID_TOKEN")
            #expect(answer.headers[.cacheControl] == "no-store")
            let body = Self.json(answer)
            #expect(body["status"] as? String == "VALID_TOKEN")
            #expect(body["kind"] as? String == kind)
            let url = try #require(body["url"] as? String)
            let cookies = (body["cookies"] as? [[String: Any]]) ?? []
            let headers = (body["headers"] as? [String: String]) ?? [:]
            let setCookies = answer.headers[values: .setCookie]
            #expect(setCookies.count == cookies.count)
            let pairs = cookies.map { CDNField($0["name"] as! String, $0["value"] as! String) }
            for cookie in cookies {
                #expect(cookie["httpOnly"] as? Bool == true)
                #expect(cookie["maxAge"] as? Int == (kind == "akamai" ? 600 : 14_400))
                #expect(cookie["path"] as? String == "/hls/tnt/")
                #expect(cookie["secure"] as? Bool == url.hasPrefix("https://"))
            }
            // What an edge would be asked for: a segment in the resource's folder.
            let withoutQuery = url.prefix { $0 != "?" }
            let segment = withoutQuery[...withoutQuery.lastIndex(of: "/")!] + "seg-7.ts"
            let facts = try Self.facts(String(segment), clock: clock)
            switch kind {
            case "akamai":
                let value = try #require(pairs.first { $0.name == "__token__" }?.value)
                try EdgeAuthToken(parsing: value).verify(key: EdgeAuthKey(hex: profiles.akamaiKey), facts: facts)
                #expect(throws: CDNRefusal.self) {
                    try EdgeAuthToken(parsing: value).verify(
                        key: EdgeAuthKey(hex: profiles.akamaiKey),
                        facts: Self.facts("https://akamai.media.test/hls/cnn/seg-7.ts", clock: clock)
                    )
                }
            case "cloudfront":
                let key = try SigningKey(path: Profiles.cloudFrontKey).publicKey
                _ = try CloudFrontToken(cookiePairs: pairs).verify(keys: ["K2JCJMDEHXQW5F": key], facts: facts)
            case "cat":
                let value = try #require(headers["CTA-Common-Access-Token"])
                #expect(cookies.isEmpty)
                let verified = try UnverifiedCommonAccessToken(text: value)
                    .verify(keys: [CATKey(hmacHex: profiles.catKey, id: "edge-key-1")], facts: facts, expectedIssuer: "tokengate-tests")
                #expect(verified.token.value(of: .iss) == .text("tokengate-tests"))
            default:
                let expression = try SecureLinkExpression(parsing: "$secure_link_expires$folder $secret")
                try SecureLinkToken(pairs: pairs).verify(expression: expression, secret: Array(profiles.secret.utf8), facts: facts)
            }

            // Spent: the same token a second time.
            let again = try await Self.post(client, "{\"token\":\"\(token)\",\"resource\":\"TNT\"}")
            #expect(again.status == .forbidden)
            #expect(again.headers[.init("X-Token-Status")!] == "TOKEN_REPLAYED")
            #expect(Self.json(again)["status"] as? String == "TOKEN_REPLAYED")
            // Neither token reaches the log.
            for line in logs.all {
                #expect(!line.contains(token))
                for pair in pairs + headers.map({ CDNField($0.key, $0.value) }) { #expect(!line.contains(pair.value)) }
            }
            // The replay was refused, and the refusal logged with the token's fingerprint, not the token.
            #expect(logs.all.contains { $0.contains("refused") && $0.contains("TOKEN_REPLAYED") && $0.contains("token_id") })
            let metrics = String(decoding: runtime.metrics.render(), as: UTF8.self)
            #expect(
                metrics.contains(
                    "tokengate_cdn_exchanges_total{profile=\"\(runtime.cdnProfiles.current.names[0])\",kind=\"\(kind)\",status=\"VALID_TOKEN\"} 1"
                ),
                "\(metrics.split(separator: "\n").filter { $0.contains("cdn_exchanges") })"
            )
        }
    }

    @Test func getRedirectsWithTheCookiesAndAPrefetchSpendsNothing() async throws {
        let profiles = try Profiles()
        defer { try? FileManager.default.removeItem(at: profiles.directory) }
        let runtime = try Self.runtime([try #require(profiles.paths["nginx-secure-link"])])
        try await runtime.application().test(.router) { client in
            let token = GateFixtures.token()
            let prefetch = try await client.executeRequest(
                uri: "/v1/playback?token=\(token)&resource=TNT",
                method: .get,
                headers: [.init("Sec-Purpose")!: "prefetch"],
                body: nil
            )
            #expect(prefetch.status == .badRequest)
            #expect(prefetch.headers[.init("X-Token-Status")!] == "BAD_REQUEST")
            let answer = try await client.executeRequest(uri: "/v1/playback?token=\(token)", method: .get, headers: [:], body: nil)
            #expect(answer.status == .seeOther, "\(String(buffer: answer.body))")
            #expect(answer.headers[.location] == "http://edge.media.test/hls/tnt/master.m3u8")
            let cookies = answer.headers[values: .setCookie]
            #expect(cookies.count == 2)
            #expect(cookies.allSatisfy { $0.contains("; Domain=edge.media.test; Path=/hls/tnt/; Max-Age=14400; HttpOnly; SameSite=Lax") })
            #expect(cookies.allSatisfy { !$0.contains("Secure") }, "an http URL's cookie is not Secure")
            #expect(cookies.contains { $0.hasPrefix("tg_md5=") } && cookies.contains { $0.hasPrefix("tg_expires=") })
            let head = try await client.executeRequest(uri: "/v1/playback?token=\(token)", method: .head, headers: [:], body: nil)
            #expect(head.status == .methodNotAllowed)
            #expect(head.headers[.allow] == "GET, POST")
        }
    }

    @Test func requestsRefusedBeforeTheTokenSpendNothing() async throws {
        let profiles = try Profiles()
        defer { try? FileManager.default.removeItem(at: profiles.directory) }
        let runtime = try Self.runtime([try #require(profiles.paths["akamai"]), try #require(profiles.paths["cat"])])
        try await runtime.application().test(.router) { client in
            let token = GateFixtures.token()
            let cases: [(String, HTTPResponse.Status, String, String)] = [
                ("{\"token\":\"\(token)\",\"resource\":\"TNT\"}", .badRequest, "BAD_REQUEST", "more than one CDN profile"),
                ("{\"token\":\"\(token)\",\"resource\":\"TNT\",\"profile\":\"nope\"}", .badRequest, "BAD_REQUEST", "no CDN profile is named nope"),
                ("{\"token\":\"\(token)\",\"profile\":\"akamai-edge\"}", .badRequest, "BAD_REQUEST", "several resources"),
                (
                    "{\"token\":\"\(token)\",\"resource\":\"HBO\",\"profile\":\"akamai-edge\"}", .forbidden, "INVALID_RESOURCE_ID",
                    "no URL for the resource HBO"
                ),
                (
                    "{\"token\":\"\(token)\",\"resource\":\"TNT\",\"profile\":\"akamai-edge\",\"x\":\"1\"}", .badRequest, "BAD_REQUEST",
                    "is not one of"
                ),
                ("{\"token\":\"\(token)\",\"resource\":1,\"profile\":\"akamai-edge\"}", .badRequest, "BAD_REQUEST", "not a string"),
                ("[\"\(token)\"]", .badRequest, "BAD_REQUEST", "not a JSON object"),
                ("{\"resource\":\"TNT\",\"profile\":\"akamai-edge\"}", .badRequest, "BAD_REQUEST", "no token"),
            ]
            for (body, status, tokenStatus, reason) in cases {
                let answer = try await Self.post(client, body)
                #expect(answer.status == status, "\(body)")
                #expect(answer.headers[.init("X-Token-Status")!] == tokenStatus, "\(body)")
                #expect((Self.json(answer)["reason"] as? String)?.contains(reason) == true, "\(body): \(String(buffer: answer.body))")
            }
            let doubled = try await client.executeRequest(
                uri: "/v1/playback?token=\(token)&token=\(token)&profile=cat-edge",
                method: .get,
                headers: [:],
                body: nil
            )
            #expect(doubled.status == .badRequest)
            let twoDevices = try await Self.post(
                client,
                "{\"token\":\"\(token)\",\"profile\":\"cat-edge\",\"deviceId\":\"a\"}",
                headers: [.init("X-Token-Device-Id")!: "b"]
            )
            #expect(twoDevices.status == .badRequest)
            // The token is whole after all of that.
            let answer = try await Self.post(client, "{\"token\":\"\(token)\",\"resource\":\"TNT\",\"profile\":\"cat-edge\"}")
            #expect(answer.status == .ok, "\(String(buffer: answer.body))")
            #expect(Self.json(answer)["kind"] as? String == "cat")
            // A media token for another resource than the one asked for: the token's check, not the profile's.
            let cnn = try await Self.post(
                client,
                "{\"token\":\"\(GateFixtures.token(GateFixtures.request(resource: "CNN")))\",\"resource\":\"TNT\",\"profile\":\"akamai-edge\"}"
            )
            #expect(cnn.headers[.init("X-Token-Status")!] == "INVALID_RESOURCE_ID")
            // An authentication token is the wrong request, 400, not a refused resource (it names none).
            let authentication = try await Self.post(
                client,
                "{\"token\":\"\(GateFixtures.token(GateFixtures.request(.authentication)))\",\"resource\":\"TNT\",\"profile\":\"akamai-edge\"}"
            )
            #expect(authentication.status == .badRequest, "\(String(buffer: authentication.body))")
            #expect((Self.json(authentication)["reason"] as? String)?.contains("authentication token is not exchanged") == true)
            // An authorization token is not exchanged: it is not one-time.
            let authorization = try await Self.post(
                client,
                "{\"token\":\"\(GateFixtures.token(GateFixtures.request(.authorization)))\",\"resource\":\"TNT\",\"profile\":\"akamai-edge\"}"
            )
            #expect(authorization.status == .badRequest)
            #expect((Self.json(authorization)["reason"] as? String)?.contains("media token") == true)
        }
    }

    /// A profile that binds the viewer's IP reads it from its header, once: none or two is 400 and spends
    /// nothing; a body over 16 KiB is 413 before anything is read.
    @Test func aBoundIPComesFromOneHeaderLineAndTheBodyIsBounded() async throws {
        let profiles = try Profiles()
        defer { try? FileManager.default.removeItem(at: profiles.directory) }
        let path = try profiles.write(
            "bound.profile",
            """
            name = bound
            kind = akamai
            key = \(profiles.directory.path)/akamai.key
            resource = TNT https://akamai.media.test/hls/tnt/master.m3u8
            bind-ip = true
            """
        )
        let clock = GateFixtures.Clock()
        let runtime = try Self.runtime([path], clock: clock)
        try await runtime.application().test(.router) { client in
            let token = GateFixtures.token()
            let body = "{\"token\":\"\(token)\"}"
            let none = try await Self.post(client, body)
            #expect(none.status == .badRequest)
            #expect((Self.json(none)["reason"] as? String)?.contains("no usable X-Real-IP") == true)
            var two = HTTPFields()
            two.append(HTTPField(name: .init("X-Real-IP")!, value: "192.0.2.7"))
            two.append(HTTPField(name: .init("X-Real-IP")!, value: "192.0.2.8"))
            let doubled = try await Self.post(client, body, headers: two)
            #expect(doubled.status == .badRequest)
            #expect((Self.json(doubled)["reason"] as? String)?.contains("more than one X-Real-IP") == true)
            let bad = try await Self.post(client, body, headers: [.init("X-Real-IP")!: "not-an-address"])
            #expect(bad.status == .badRequest)
            // Nothing was spent: the one good request is allowed, and its token names the IP.
            let answer = try await Self.post(client, body, headers: [.init("X-Real-IP")!: "192.0.2.7"])
            #expect(answer.status == .ok, "\(String(buffer: answer.body))")
            let value = try #require((Self.json(answer)["cookies"] as? [[String: Any]])?.first?["value"] as? String)
            #expect(value.hasPrefix("ip=192.0.2.7~"), "\(value)")
            var facts = try Self.facts("https://akamai.media.test/hls/tnt/seg.ts", clock: clock)
            facts.clientIP = "192.0.2.8"
            #expect(throws: CDNRefusal.self) { try EdgeAuthToken(parsing: value).verify(key: EdgeAuthKey(hex: profiles.akamaiKey), facts: facts) }
            let large = try await Self.post(client, "{\"token\":\"" + String(repeating: "A", count: 20_000) + "\"}")
            #expect(large.status == .contentTooLarge)
            #expect(large.headers[.init("X-Token-Status")!] == "BAD_REQUEST")
        }
    }

    /// Over a real socket the exchange is answered from the event loop
    /// (docs/DESIGN.md#answers-written-from-the-event-loop): its JSON read
    /// whole whether it comes with a length or in chunks, a body past 16 KiB
    /// refused 413 whether it is announced or arrives so, and its answers in
    /// order with the framework's and the auth routes' on one connection.
    @Test func theExchangeIsAnsweredFromTheEventLoopInOrder() async throws {
        let profiles = try Profiles()
        defer { try? FileManager.default.removeItem(at: profiles.directory) }
        let runtime = try Self.runtime([try #require(profiles.paths["akamai"])])
        try await runtime.application(port: 0).test(.live) { client in
            let port = try #require(client.port)
            func post(_ json: String, chunked: Bool = false) -> String {
                var text = "POST /v1/playback HTTP/1.1\r\nHost: gate\r\nContent-Type: application/json\r\n"
                guard chunked else { return text + "Content-Length: \(json.utf8.count)\r\n\r\n" + json }
                text += "Transfer-Encoding: chunked\r\n\r\n"
                // Three chunks: the body arrives in parts.
                let bytes = Array(json.utf8)
                let cut = [0, bytes.count / 3, 2 * bytes.count / 3, bytes.count]
                for index in 0..<3 where cut[index] < cut[index + 1] {
                    let part = bytes[cut[index]..<cut[index + 1]]
                    text += String(part.count, radix: 16) + "\r\n" + String(decoding: part, as: UTF8.self) + "\r\n"
                }
                return text + "0\r\n\r\n"
            }
            let probe = "GET /healthz HTTP/1.1\r\nHost: gate\r\n\r\n"
            let auth = DirectAnswerTests.request([
                ("X-Original-URI", "/hls/tnt/master.m3u8?token=\(GateFixtures.token())"), ("X-Token-Resource", "TNT"),
            ])
            let large = "{\"token\":\"" + String(repeating: "A", count: 20_000) + "\"}"
            let last = "GET /healthz HTTP/1.1\r\nHost: gate\r\nConnection: close\r\n\r\n"
            let bytes =
                post(#"{"token":"\#(GateFixtures.token())","resource":"TNT"}"#) + probe
                + post(#"{"resource":"TNT","token":"\#(GateFixtures.token())"}"#, chunked: true) + auth + post(large, chunked: true)
                + post(#"{"token":"x","resource":"TNT"}"#) + last
            let answers = try DirectAnswerTests.answers(try await offloaded { try RawHTTP.exchange(port: port, Array(bytes.utf8)) })
            #expect(answers.map(\.status) == [200, 200, 200, 200, 413, 401, 200], "\(answers.map { ($0.status, $0.body.prefix(120)) })")
            #expect(answers.map(\.tokenStatus) == ["VALID_TOKEN", nil, "VALID_TOKEN", "VALID_TOKEN", "BAD_REQUEST", "INVALID_TOKEN_FORMAT", nil])
            #expect(answers.first?.body.hasPrefix("{\"status\":\"VALID_TOKEN\",\"profile\":\"akamai-edge\"") == true)
            #expect(answers.dropFirst(4).first?.body.contains("over 16384 bytes") == true)
            let announced = post(large) + last
            let refused = try DirectAnswerTests.answers(try await offloaded { try RawHTTP.exchange(port: port, Array(announced.utf8)) })
            #expect(refused.map(\.status) == [413, 200])
            #expect(refused.first?.body.contains("the body is \(large.utf8.count) bytes") == true, "\(refused.first?.body ?? "")")
            let metrics = try await RawHTTP.fetch(port: port, "/metrics").body
            #expect(metrics.contains("\ntokengate_direct_answers_total 6\n"), "the exchanges and the auth request")
        }
    }

    /// `tokeninspect mint cdn` hands out what the exchange hands out, through the same code and defaults:
    /// with one clock, the URL, every cookie and every header are the same bytes (a CAT's claims but its
    /// random `cti`), and a CAT's `iss` is the gate's requestor id when the profile names no issuer.
    @Test(arguments: ["akamai", "cloudfront", "cat", "nginx-secure-link"])
    func mintCDNPrintsWhatTheExchangeHandsOut(kind: String) async throws {
        let profiles = try Profiles()
        defer { try? FileManager.default.removeItem(at: profiles.directory) }
        // The CAT profile without its issuer: the gate's requestor id (TNT) is then the iss.
        let text = try String(contentsOfFile: try #require(profiles.paths[kind]), encoding: .utf8)
            .split(separator: "\n").filter { !$0.hasPrefix("issuer = ") }.joined(separator: "\n")
        let path = try profiles.write("same-\(kind).profile", text.contains("lifetime") ? text : text + "\nlifetime = 900\n")
        let clock = GateFixtures.Clock()
        let runtime = try Self.runtime([path], clock: clock)
        let seconds = clock.read().millisecondsSince1970 / 1000
        let tokeninspect = try #require(Self.tokeninspect, "the tokeninspect binary beside the tests")
        let minted = try Subprocess.run(
            tokeninspect,
            [
                "mint", "cdn", "--profile", path, "--resource", "TNT", "--now", String(seconds),
                "--requestor", "TNT",
            ],
            separateErrors: true
        )
        #expect(minted.status == 0, "\(minted.errorText)")
        let lines = minted.text.split(separator: "\n").map(String.init)
        try await runtime.application().test(.router) { client in
            let answer = try await Self.post(client, "{\"token\":\"\(GateFixtures.token())\",\"resource\":\"TNT\"}")
            #expect(answer.status == .ok, "\(String(buffer: answer.body))")
            let body = Self.json(answer)
            #expect(lines.first == body["url"] as? String, "\(lines) \(body)")
            let cookies = (body["cookies"] as? [[String: Any]]) ?? []
            for cookie in cookies {
                let name = try #require(cookie["name"] as? String)
                let value = try #require(cookie["value"] as? String)
                #expect(lines.contains { $0.hasPrefix("Set-Cookie: \(name)=\(value);") }, "\(kind): \(name) differs: \(lines)")
            }
            let headers = (body["headers"] as? [String: String]) ?? [:]
            #expect(lines.count == 1 + cookies.count + headers.count, "\(lines)")
            for (name, value) in headers {
                let printed = try #require(lines.first { $0.hasPrefix("\(name): ") }, "\(lines)")
                let mintedCAT = try UnverifiedCommonAccessToken(text: String(printed.dropFirst(name.count + 2)))
                let handedCAT = try UnverifiedCommonAccessToken(text: value)
                #expect(handedCAT.token.issuer == "TNT", "the requestor id is the iss")
                #expect(mintedCAT.token.claims.filter { $0.key != .integer(7) } == handedCAT.token.claims.filter { $0.key != .integer(7) })
                #expect(mintedCAT.message.protectedHeader == handedCAT.message.protectedHeader)
            }
            if kind != "cat" { #expect(lines.joined(separator: "\n") == Self.printed(body), "\(kind)") }
        }
        if kind == "cat" {
            // No issuer and no requestor: a usage error naming the option, never the profile's name as iss.
            let unnamed = try Subprocess.run(tokeninspect, ["mint", "cdn", "--profile", path, "--resource", "TNT"], separateErrors: true)
            #expect(unnamed.status == 64 && unnamed.errorText.contains("--requestor"), "\(unnamed.status) \(unnamed.errorText)")
        }
    }

    /// The lines `mint cdn` prints for an exchange's answer: the URL, then each cookie as the gate's `Set-Cookie`.
    static func printed(_ body: [String: Any]) -> String {
        let cookies = ((body["cookies"] as? [[String: Any]]) ?? []).map { cookie in
            "Set-Cookie: \(cookie["name"]!)=\(cookie["value"]!); Domain=\(cookie["domain"]!); Path=\(cookie["path"]!); Max-Age=\(cookie["maxAge"]!)"
                + ((cookie["secure"] as? Bool) == true ? "; Secure" : "") + "; HttpOnly; SameSite=\(cookie["sameSite"]!)"
        }
        return ([body["url"] as? String ?? ""] + cookies).joined(separator: "\n")
    }

    /// The `tokeninspect` SwiftPM built beside this test bundle.
    static let tokeninspect: String? = {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("tokeninspect").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return nil
    }()

    /// A metric label takes a configured value or `-`, never what a client sent: 1,000 random profile names
    /// (300 characters among them) add one series, and every refusal is counted, those refused before the
    /// exchange (HEAD, a doubled parameter, a doubled member, a body that is not JSON) too.
    @Test func profileLabelsComeFromTheConfigurationAndEveryRefusalIsCounted() async throws {
        let profiles = try Profiles()
        defer { try? FileManager.default.removeItem(at: profiles.directory) }
        let runtime = try Self.runtime([try #require(profiles.paths["cat"])])
        @Sendable func series() -> [Substring] {
            String(decoding: runtime.metrics.render(), as: UTF8.self).split(separator: "\n").filter { $0.hasPrefix("tokengate_cdn_exchanges_total{") }
        }
        try await runtime.application().test(.router) { client in
            var generator = SystemRandomNumberGenerator()
            for index in 0..<1000 {
                let length = index % 10 == 0 ? 300 : Int.random(in: 1...24, using: &generator)
                let name = String((0..<length).map { _ in "abcdefghijklmnopqrstuvwxyz0123456789-".randomElement(using: &generator)! })
                let answer = try await Self.post(client, "{\"token\":\"x\",\"profile\":\"\(name)\"}")
                #expect(answer.status == .badRequest)
            }
            #expect(series() == [#"tokengate_cdn_exchanges_total{profile="-",kind="-",status="BAD_REQUEST"} 1000"#], "\(series())")
            let token = GateFixtures.token()
            _ = try await client.executeRequest(uri: "/v1/playback?token=\(token)", method: .head, headers: [:], body: nil)
            _ = try await client.executeRequest(uri: "/v1/playback?token=\(token)&token=\(token)", method: .get, headers: [:], body: nil)
            _ = try await Self.post(client, "{\"token\":\"\(token)\",\"token\":\"\(token)\"}")
            _ = try await Self.post(client, "{\"token\":\"\(token)\"}", headers: [.contentType: "text/plain"])
            let played = try await Self.post(client, "{\"token\":\"\(token)\",\"resource\":\"TNT\"}")
            #expect(played.status == .ok)
            #expect(
                Set(series()) == [
                    #"tokengate_cdn_exchanges_total{profile="-",kind="-",status="BAD_REQUEST"} 1004"#,
                    #"tokengate_cdn_exchanges_total{profile="cat-edge",kind="cat",status="VALID_TOKEN"} 1"#,
                ],
                "\(series())"
            )
        }
    }

    /// The exchange reads JSON only, as its OpenAPI description says: a JSON body labelled as text or a
    /// form, or unlabelled, is 415 and spends nothing; a charset parameter and any case are fine.
    @Test func aBodyThatIsNotLabelledJSONIs415AndSpendsNothing() async throws {
        let profiles = try Profiles()
        defer { try? FileManager.default.removeItem(at: profiles.directory) }
        let runtime = try Self.runtime([try #require(profiles.paths["cat"])])
        try await runtime.application().test(.router) { client in
            let token = GateFixtures.token()
            let body = "{\"token\":\"\(token)\",\"resource\":\"TNT\"}"
            for type in ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/jsonx"] {
                let answer = try await Self.post(client, body, headers: [.contentType: type])
                #expect(answer.status == .unsupportedMediaType, "\(type)")
                #expect(answer.headers[.init("X-Token-Status")!] == "BAD_REQUEST", "\(type)")
                #expect((Self.json(answer)["reason"] as? String)?.contains("application/json") == true, "\(type)")
            }
            let unlabelled = try await client.executeRequest(uri: "/v1/playback", method: .post, headers: [:], body: ByteBuffer(string: body))
            #expect(unlabelled.status == .unsupportedMediaType)
            var two = HTTPFields()
            two.append(HTTPField(name: .contentType, value: "application/json"))
            two.append(HTTPField(name: .contentType, value: "text/plain"))
            let doubled = try await client.executeRequest(uri: "/v1/playback", method: .post, headers: two, body: ByteBuffer(string: body))
            #expect(doubled.status == .unsupportedMediaType)
            let played = try await Self.post(client, body, headers: [.contentType: "Application/JSON; charset=utf-8"])
            #expect(played.status == .ok, "\(String(buffer: played.body))")
        }
    }

    /// Every spelling of the viewer's IP a proxy may send is read to its canonical text before the token is
    /// judged: no kind's issuer refuses it after the token is spent (a bracketed IPv6 address once burned the
    /// token with a 500), and an address no kind can use is 400 with the token whole.
    @Test(arguments: ["akamai", "cloudfront", "cat", "nginx-secure-link"])
    func everyIPSpellingIsReadBeforeTheTokenIsSpent(kind: String) async throws {
        let profiles = try Profiles()
        defer { try? FileManager.default.removeItem(at: profiles.directory) }
        // secure_link binds the IP through $remote_addr in its expression.
        let original = try String(contentsOfFile: try #require(profiles.paths[kind]), encoding: .utf8)
            .replacingOccurrences(of: "$secure_link_expires$folder $secret", with: "$secure_link_expires$folder$remote_addr $secret")
        let bound = try profiles.write("bound-\(kind).profile", original + "\nbind-ip = true\n")
        let runtime = try Self.runtime([bound])
        try await runtime.application().test(.router) { client in
            for (spelling, canonical) in [
                ("[2001:db8::1]", "2001:db8::1"), ("2001:DB8:0:0:0:0:0:1", "2001:db8::1"),
                ("::ffff:192.0.2.7", "192.0.2.7"), ("192.0.2.7", "192.0.2.7"),
            ] {
                let token = GateFixtures.token()
                let answer = try await Self.post(client, "{\"token\":\"\(token)\",\"resource\":\"TNT\"}", headers: [.init("X-Real-IP")!: spelling])
                #expect(answer.status == .ok, "\(kind) \(spelling): \(String(buffer: answer.body))")
                if kind == "akamai" {
                    let value = (Self.json(answer)["cookies"] as? [[String: Any]])?.first?["value"] as? String ?? ""
                    #expect(value.hasPrefix("ip=\(canonical)~"), "\(spelling): \(value)")
                }
                let again = try await Self.post(client, "{\"token\":\"\(token)\",\"resource\":\"TNT\"}", headers: [.init("X-Real-IP")!: canonical])
                #expect(again.headers[.init("X-Token-Status")!] == "TOKEN_REPLAYED", "\(kind) \(spelling)")
            }
            let token = GateFixtures.token()
            for unusable in ["[192.0.2.7]x", "2001:db8::1%eth0", "192.0.2.256", "192.0.2.7, 198.51.100.1"] {
                let refused = try await Self.post(client, "{\"token\":\"\(token)\",\"resource\":\"TNT\"}", headers: [.init("X-Real-IP")!: unusable])
                #expect(refused.status == .badRequest, "\(kind) \(unusable)")
            }
            let played = try await Self.post(client, "{\"token\":\"\(token)\",\"resource\":\"TNT\"}", headers: [.init("X-Real-IP")!: "192.0.2.7"])
            #expect(played.status == .ok, "\(kind): the token was spent by a refusal: \(String(buffer: played.body))")
        }
    }

    @Test func aReloadReplacesTheProfilesWholeAndABadOneKeepsThem() async throws {
        let profiles = try Profiles()
        defer { try? FileManager.default.removeItem(at: profiles.directory) }
        let clock = GateFixtures.Clock()
        let path = try #require(profiles.paths["akamai"])
        let runtime = try Self.runtime([path], clock: clock)
        try await runtime.application().test(.router) { client in
            func grantValue() async throws -> String {
                let answer = try await Self.post(client, "{\"token\":\"\(GateFixtures.token())\",\"resource\":\"TNT\"}")
                #expect(answer.status == .ok)
                return try #require((Self.json(answer)["cookies"] as? [[String: Any]])?.first?["value"] as? String)
            }
            let facts = try Self.facts("https://akamai.media.test/hls/tnt/a.ts", clock: clock)
            // A new first key signs after the reload; the old one still verifies what it made.
            let newKey = "99887766554433221100998877665544"
            try profiles.write("akamai-new.key", newKey)
            try profiles.write(
                "akamai.profile",
                """
                name = akamai-edge
                kind = akamai
                key = \(profiles.directory.path)/akamai-new.key
                key = \(profiles.directory.path)/akamai.key
                resource = TNT https://akamai.media.test/hls/tnt/master.m3u8
                """
            )
            #expect(runtime.reloader.reload(because: "test"))
            try EdgeAuthToken(parsing: try await grantValue()).verify(key: EdgeAuthKey(hex: newKey), facts: facts)
            // A broken profile: the reload fails whole, the set in use stays.
            try profiles.write("akamai.profile", "name = akamai-edge\nkind = akamai\n")
            #expect(!runtime.reloader.reload(because: "test"))
            try EdgeAuthToken(parsing: try await grantValue()).verify(key: EdgeAuthKey(hex: newKey), facts: facts)
        }
    }

    @Test func withoutAProfileThePathIsNotServed() async throws {
        try await GateFixtures.runtime().application().test(.router) { client in
            let answer = try await Self.post(client, "{\"token\":\"x\"}")
            #expect(answer.status == .notFound)
        }
    }
}
