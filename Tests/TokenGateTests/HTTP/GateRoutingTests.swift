import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import GateTestSupport
@testable import TokenGate

/// The gate's routes (`GateRoute`, docs/DESIGN.md#where-the-routes-are-declared)
/// over every path and method: which endpoint answers, 405 with the path's
/// `Allow`, 404; and the endpoint each request is counted under in
/// `tokengate_request_duration_seconds`. A path or method routed wrongly, or
/// a prefix that takes too much or too little, changes a row.
struct GateRoutingTests {
    enum Expected: CustomStringConvertible {
        /// Answered by the endpoint of this metric label (any status but the routes' own 404 and 405).
        case endpoint(String)
        /// 405 with `Allow`, counted under `label`.
        case methodNotAllowed(allow: String, label: String)
        case notFound

        var description: String {
            switch self {
            case .endpoint(let label): "endpoint \(label)"
            case .methodNotAllowed(let allow, let label): "405 Allow: \(allow) (counted as \(label))"
            case .notFound: "404"
            }
        }

        var label: String {
            switch self {
            case .endpoint(let label), .methodNotAllowed(_, let label): label
            case .notFound: "other"
            }
        }
    }

    static let propfind = HTTPRequest.Method("PROPFIND")!
    static let others: [HTTPRequest.Method] = [.post, .put, .delete, .patch, .options, propfind]

    /// Every route, with the methods it takes and some it does not.
    static var table: [(HTTPRequest.Method, String, Expected)] {
        var rows: [(HTTPRequest.Method, String, Expected)] = []
        // The proxies' endpoints refuse another method themselves; the probes before they are reached.
        for (path, label, refusedAs) in [
            ("/v1/auth-request", "auth-request", "auth-request"),
            ("/v1/forward-auth", "forward-auth", "forward-auth"),
            ("/healthz", "healthz", "other"), ("/readyz", "readyz", "other"),
            ("/metrics", "metrics", "other"),
        ] {
            rows += [(.get, path, .endpoint(label)), (.head, path, .endpoint(label))]
            rows += others.map { ($0, path, .methodNotAllowed(allow: "GET, HEAD", label: refusedAs)) }
        }
        for (path, label) in [("/v1/verify", "verify"), ("/v1/inspect", "inspect")] {
            rows.append((.post, path, .endpoint(label)))
            rows += [HTTPRequest.Method.get, .head, .put, .delete, propfind].map {
                ($0, path, .methodNotAllowed(allow: "POST", label: label))
            }
        }
        rows += [(.get, "/v1/playback", .endpoint("playback")), (.post, "/v1/playback", .endpoint("playback"))]
        rows += [HTTPRequest.Method.head, .put, .delete, propfind].map {
            ($0, "/v1/playback", .methodNotAllowed(allow: "GET, POST", label: "playback"))
        }
        // Envoy: the prefix itself and any path below it, with any method.
        for path in ["/v1/ext-authz", "/v1/ext-authz/", "/v1/ext-authz/hls/a.m3u8", "/v1/ext-authz/healthz"] {
            rows += ([.get, .head] + others).map { ($0, path, .endpoint("ext-authz")) }
        }
        // The mounted debugger takes its prefix and below, and answers its own 404 and 405.
        rows += [
            (.get, "/debugger", .endpoint("debugger")), (.get, "/debugger/nothing-here", .endpoint("debugger")),
            (.get, "/debugger/report", .endpoint("debugger")), (propfind, "/debugger", .endpoint("debugger")),
        ]
        // Neither a route nor below a prefix: paths are matched as written.
        rows += [
            (.get, "/", .notFound), (.get, "/v1/nothing", .notFound), (.post, "/v1/nothing", .notFound),
            (.get, "/v1/ext-authzed", .notFound), (.get, "/v1", .notFound), (.get, "/debuggers", .notFound),
            (.get, "/v1/auth-request/more", .notFound), (propfind, "/v1/verify/more", .notFound),
            (.get, "/healthz/", .notFound), (.get, "/v1/auth-request/", .notFound),
        ]
        return rows
    }

    static func count(_ runtime: GateRuntime, _ label: String) -> Double {
        ScrapedMetrics(runtime)[#"tokengate_request_duration_seconds_count{endpoint="\#(label)"}"#] ?? 0
    }

    @Test func everyPathAndMethodReachesItsRoute() async throws {
        let profiles = try PlaybackExchangeTests.Profiles()
        defer { try? FileManager.default.removeItem(at: profiles.directory) }
        let runtime = try GateFixtures.runtime(["--cdn-profile", try #require(profiles.paths["nginx-secure-link"]), "--debugger"])
        try await runtime.application().test(.router) { client in
            for (method, path, expected) in Self.table {
                let what = "\(method) \(path)"
                let before = Self.count(runtime, expected.label)
                let response = try await client.executeRequest(uri: path, method: method, headers: [:], body: nil)
                switch expected {
                case .endpoint:
                    if response.status == .methodNotAllowed || response.status == .notFound {
                        // The debugger answers its own 404 and 405, with its own headers.
                        #expect(
                            expected.label == "debugger" && response.headers[.contentSecurityPolicy] != nil,
                            "\(what): \(response.status), expected \(expected)"
                        )
                    }
                case .methodNotAllowed(let allow, _):
                    #expect(response.status == .methodNotAllowed, "\(what): \(response.status), expected \(expected)")
                    #expect(response.headers[.allow] == allow, "\(what)")
                    #expect(response.headers[.cacheControl] == "no-store", "\(what)")
                case .notFound:
                    #expect(response.status == .notFound, "\(what): \(response.status), expected \(expected)")
                    #expect(response.headers[.cacheControl] == "no-store", "\(what)")
                    #expect(String(buffer: response.body) == "not found\n", "\(what)")
                }
                #expect(Self.count(runtime, expected.label) == before + 1, "\(what) not counted as \(expected.label)")
            }
        }
    }

    /// What a `--cdn-profile` and `--debugger` add is absent without them.
    @Test func optionalRoutesAreAbsentUnlessConfigured() async throws {
        let runtime = try GateFixtures.runtime()
        try await runtime.application().test(.router) { client in
            for (method, path) in [
                (HTTPRequest.Method.get, "/v1/playback"), (.post, "/v1/playback"), (.head, "/v1/playback"),
                (.get, "/debugger"), (.post, "/debugger/report"),
            ] {
                let response = try await client.executeRequest(uri: path, method: method, headers: [:], body: nil)
                #expect(response.status == .notFound, "\(method) \(path)")
            }
        }
    }
}
