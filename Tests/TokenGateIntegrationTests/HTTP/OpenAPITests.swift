import EntitlementTokens
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import GateTestSupport
@testable import TokenGate

#if canImport(Glibc)
import Glibc
#endif

/// `docs/openapi.yaml` against the running gate (docs/DESIGN.md#endpoints-and-answers): the
/// property-based tester schemathesis (PyPI) generates requests from the
/// description — headers, queries, cookies, bodies, undeclared methods — and
/// checks every answer's status, content type, headers and body schema
/// against it. The gate is the built `tokengate serve`, as an operator runs
/// it, on a free loopback port with the sample key and a playback-session
/// secret; a fresh media token fixed in `X-Forwarded-Uri` makes it answer
/// allows (with a new session's headers) and replays, not only refusals.
///
/// Skipped, naming the package, when schemathesis is missing;
/// `TOKENINSPECT_INTEGRATION=require` (scripts/test) makes that a failure.
@Suite(.serialized) struct OpenAPITests {
    static let description = GateFixtures.repository.appendingPathComponent("docs/openapi.yaml")
    static var required: Bool { ProcessInfo.processInfo.environment["TOKENINSPECT_INTEGRATION"] == "require" }

    /// schemathesis on PATH, beside `TOKENINSPECT_PYTHON`, or in the virtual
    /// environment `scripts/test` makes (`TOKENINSPECT_VENV`, else ~/.cache/tokeninspect-venv).
    static var schemathesis: String? {
        let environment = ProcessInfo.processInfo.environment
        var candidates = (environment["PATH"] ?? "").split(separator: ":").map { "\($0)/schemathesis" }
        if let python = environment["TOKENINSPECT_PYTHON"] {
            candidates.append(URL(fileURLWithPath: python).deletingLastPathComponent().appendingPathComponent("schemathesis").path)
        }
        let cache = environment["XDG_CACHE_HOME"] ?? (NSHomeDirectory() + "/.cache")
        candidates.append((environment["TOKENINSPECT_VENV"] ?? cache + "/tokeninspect-venv") + "/bin/schemathesis")
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    static let missing = "schemathesis is not installed (PyPI package schemathesis: scripts/test --yes installs it in its venv)"

    /// The checks every answer must pass. `unsupported_method` and
    /// `allow_header_conformance` send methods the description does not list
    /// and expect 405 with `Allow`.
    static let checks = [
        "not_a_server_error", "status_code_conformance", "content_type_conformance",
        "response_headers_conformance", "response_schema_conformance",
        "unsupported_method", "allow_header_conformance",
    ]

    /// The run's settings (schemathesis.toml). The auth endpoints document
    /// 500 (a site that sends a bad `X-Token-Cookie-Path`) and 503 (the
    /// replay store down): not_a_server_error accepts them there only.
    static func settings(forwardedURI: String) -> String {
        """
        [[operations]]
        include-path-regex = "^/(readyz$|v1/(auth-request|forward-auth|ext-authz/))"
        checks.not_a_server_error.expected-statuses = ["2xx", "3xx", "4xx", "500", "503"]

        [[operations]]
        include-path = "/v1/forward-auth"
        parameters = { "header.X-Forwarded-Uri" = "\(forwardedURI)" }

        """
    }

    /// A media token valid for the next hour, as players send it (Base64url).
    static func freshToken() throws -> String {
        var request = MintRequest(kind: .media, requestorID: "TNT", resourceID: "TNT", issueTime: TokenTimestamp.now())
        request.mvpdID = "Comcast_SSO"
        request.ttlMilliseconds = 3_600_000
        request.encoding = .base64url
        return try TokenMinter.mint(request, key: GateFixtures.signingKey)
    }

    /// A Common Access Token valid for ten minutes, for any URI (no `catu`): the allow of kind `cat`.
    static func freshCAT() -> String {
        CATGateFixtures.token(now: CATGateFixtures.seconds(TokenTimestamp.now()), removing: [.catu])
    }

    /// Runs schemathesis with `arguments` in a scratch folder (its example
    /// database and reports stay there), killed after `seconds`.
    static func run(_ arguments: [String], settings: String, seconds: Double = 120) throws -> (status: Int32, output: String) {
        let executable = try #require(Self.schemathesis, "schemathesis is required (TOKENINSPECT_INTEGRATION=require): \(missing)")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("schemathesis-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let config = folder.appendingPathComponent("schemathesis.toml")
        try settings.write(to: config, atomically: true, encoding: .utf8)
        let outputFile = folder.appendingPathComponent("output.txt")
        _ = FileManager.default.createFile(atPath: outputFile.path, contents: nil)  // opened next, which throws if it is not there
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["--config-file", config.path, "--no-color"] + arguments
        process.currentDirectoryURL = folder
        var environment = ProcessInfo.processInfo.environment
        environment["SCHEMATHESIS_HOOKS"] = nil
        environment["NO_COLOR"] = "1"
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        // A file, not a pipe: nobody reads a pipe while the run goes on.
        let output = try FileHandle(forWritingTo: outputFile)
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning, Date() < deadline { usleep(50_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            Issue.record("schemathesis ran over \(Int(seconds)) s")
        }
        process.waitUntilExit()
        try output.close()
        return (process.terminationStatus, (try? String(contentsOf: outputFile, encoding: .utf8)) ?? "")
    }

    /// The arguments of a bounded, repeatable run of `description` against `port`.
    static func arguments(_ description: URL, port: Int, examples: Int, only: [String] = []) -> [String] {
        [
            "run", description.path, "--url", "http://127.0.0.1:\(port)", "--checks", checks.joined(separator: ","),
            "--max-examples", "\(examples)", "--seed", "20261125", "--workers", "1", "--no-shrink",
            "--generation-database", "none", "--request-timeout", "10", "--output-sanitize", "false",
        ]
            + only.flatMap { ["--include-operation-id", $0] }
    }

    static func sessionSecret() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("openapi-session-\(UUID().uuidString).key").path
        try String(repeating: "openapi-session-secret-", count: 3).write(toFile: path, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        return path
    }

    /// What the description promises of methods, checked in process so that
    /// it holds without schemathesis too: a method an endpoint does not serve
    /// is 405 with `Allow` (RFC 9110 §15.5.6), before anything else is read.
    @Test func aMethodAnEndpointDoesNotServeIs405WithAllow() async throws {
        try await GateFixtures.runtime().application().test(.router) { client in
            let cases: [(String, HTTPRequest.Method, String)] = [
                ("/v1/auth-request", .post, "GET, HEAD"), ("/v1/forward-auth", .delete, "GET, HEAD"),
                ("/healthz", .post, "GET, HEAD"), ("/readyz", .put, "GET, HEAD"), ("/metrics", .delete, "GET, HEAD"),
                ("/v1/inspect", .get, "POST"),
                // The method before the query: this query alone would be a 400.
                ("/v1/verify?device-id=a&fingerprint=b&now=never", .get, "POST"),
            ]
            for (uri, method, allow) in cases {
                let response = try await client.executeRequest(uri: uri, method: method, headers: [:], body: nil)
                #expect(response.status == .methodNotAllowed, "\(method) \(uri)")
                #expect(response.headers[.allow] == allow, "\(method) \(uri)")
                #expect(response.headers[.cacheControl] == "no-store", "\(method) \(uri)")
            }
            for uri in ["/healthz", "/readyz", "/metrics"] {
                #expect(try await client.executeRequest(uri: uri, method: .head, headers: [:], body: nil).status == .ok, "HEAD \(uri)")
            }
        }
    }

    @Test(.enabled(if: schemathesis != nil || required, "\(missing)"))
    func theRunningGateHonoursItsDescription() throws {
        let secret = try Self.sessionSecret()
        defer { try? FileManager.default.removeItem(atPath: secret) }
        // A CDN profile, so /v1/playback is served: nginx secure_link, one resource.
        let profile = FileManager.default.temporaryDirectory.appendingPathComponent("openapi-cdn-\(UUID().uuidString).profile").path
        try
            "name = edge\nkind = nginx-secure-link\nkey = \(secret)\nresource = TNT https://edge.media.test/hls/tnt/index.m3u8\nsecure-link-md5 = $secure_link_expires$folder $secret\n"
            .write(toFile: profile, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: profile) }
        let gate = try GateProcess([
            "--session-secret", secret, "--replay", "memory", "--cdn-profile", profile,
            "--cat-key", "\(CATGateFixtures.hmacPath) edge-1",
        ])
        defer { gate.stop() }
        let uri = "/hls/tnt/index.m3u8?token=\(try Self.freshToken())"
        let start = Date()
        let (status, output) = try Self.run(
            Self.arguments(Self.description, port: gate.port, examples: 30),
            settings: Self.settings(forwardedURI: uri) + """

                [[operations]]
                include-operation-id = "authRequest"
                parameters = { "header.CTA-Common-Access-Token" = "\(Self.freshCAT())" }

                [[operations]]
                include-operation-id = "playbackRedirect"
                parameters = { "query.token" = "\(try Self.freshToken())" }

                """
        )
        #expect(status == 0, "schemathesis found the gate and docs/openapi.yaml disagreeing:\n\(output.suffix(6000))")
        #expect(output.contains("Selected: 21/21"), "not every documented operation was tested:\n\(output.suffix(2000))")
        #expect(Date().timeIntervalSince(start) < 90, "the run took \(Date().timeIntervalSince(start)) s")

        // The run reached the answers worth checking: an allow with a new
        // session (its headers), the replay of that token, and refusals.
        let metrics = ScrapedMetrics(try RawHTTP.get(port: gate.port, "/metrics").body)
        #expect(metrics.sum(prefix: "tokengate_verdicts_total{status=\"VALID_TOKEN\"") >= 1, "no allow was checked")
        #expect(metrics.sum(prefix: "tokengate_sessions_total{result=\"issued\"}") >= 1, "no session was issued")
        #expect(metrics.sum(prefix: "tokengate_verdicts_total{status=\"TOKEN_REPLAYED\"") >= 1, "no replay was checked")
        #expect(metrics.sum(prefix: "tokengate_verdicts_total{status=\"NO_TOKEN\"") >= 1, "no refusal was checked")
        #expect(metrics.sum(prefix: "tokengate_verdicts_total{status=\"VALID_TOKEN\",kind=\"cat\"}") >= 1, "no CAT allow was checked")
        #expect(
            metrics.sum(prefix: "tokengate_cdn_exchanges_total{profile=\"edge\",kind=\"nginx-secure-link\",status=\"VALID_TOKEN\"}") >= 1,
            "no CDN exchange was allowed"
        )
    }

    /// The outage answers: `/readyz` 503 with its reason, and a media token
    /// 503 `REPLAY_CHECK_UNAVAILABLE` while the replay store does not answer.
    @Test(.enabled(if: schemathesis != nil || required, "\(missing)"))
    func theOutageAnswersHonourItToo() throws {
        let nobody = try RawHTTP.freePort()
        let gate = try GateProcess(["--replay", "redis://127.0.0.1:\(nobody)", "--replay-timeout", "20"])
        defer { gate.stop() }
        let uri = "/hls/tnt/index.m3u8?token=\(try Self.freshToken())"
        let (status, output) = try Self.run(
            Self.arguments(
                Self.description,
                port: gate.port,
                examples: 10,
                only: ["readyz", "forwardAuth", "healthz"]
            ),
            settings: Self.settings(forwardedURI: uri)
        )
        #expect(status == 0, "schemathesis found the gate and docs/openapi.yaml disagreeing:\n\(output.suffix(6000))")
        let metrics = ScrapedMetrics(try RawHTTP.get(port: gate.port, "/metrics").body)
        #expect(
            metrics.sum(prefix: "tokengate_verdicts_total{status=\"REPLAY_CHECK_UNAVAILABLE\"") >= 1,
            "no REPLAY_CHECK_UNAVAILABLE was checked"
        )
        #expect(try RawHTTP.get(port: gate.port, "/readyz").status == 503)
    }

    /// The check bites: a description that leaves out one status the gate
    /// sends (NO_TOKEN on a 401) makes the same run fail, naming the value.
    @Test(.enabled(if: schemathesis != nil || required, "\(missing)"))
    func aDescriptionTheGateDoesNotHonourFails() throws {
        let text = try String(contentsOf: Self.description, encoding: .utf8)
        let documented = "schema: {enum: [NO_TOKEN, INVALID_TOKEN_FORMAT,"
        #expect(text.contains(documented), "the 401's X-Token-Status enum moved: update this test")
        let wrong = FileManager.default.temporaryDirectory.appendingPathComponent("openapi-wrong-\(UUID().uuidString).yaml")
        try text.replacingOccurrences(of: documented, with: "schema: {enum: [INVALID_TOKEN_FORMAT,")
            .write(to: wrong, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: wrong) }
        let gate = try GateProcess([])
        defer { gate.stop() }
        let (status, output) = try Self.run(
            Self.arguments(wrong, port: gate.port, examples: 5, only: ["authRequest"]),
            settings: Self.settings(forwardedURI: "/")
        )
        #expect(status != 0, "schemathesis passed a description that leaves out NO_TOKEN:\n\(output.suffix(3000))")
        #expect(
            output.contains("Response header does not conform to the schema") && output.contains("\"NO_TOKEN\" is not one of"),
            "\(output.suffix(3000))"
        )
    }
}
