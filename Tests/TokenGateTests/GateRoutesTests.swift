import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
@testable import TokenGate

/// The gate's route table (``GateRoutes``, docs/DESIGN.md#where-the-routes-are-declared)
/// over every path and method: which endpoint answers, 405 with the path's
/// `Allow`, 404; and the endpoint each request is counted under in
/// `tokengate_request_duration_seconds`. A route declared with a wrong path
/// or method, or a prefix that takes too much or too little, changes a row.
struct GateRoutesTests {
    enum Expected: CustomStringConvertible {
        /// Answered by the endpoint of this metric label (any status but the router's 404 and 405).
        case endpoint(String)
        case methodNotAllowed(allow: String)
        case notFound

        var description: String {
            switch self {
            case .endpoint(let label): "endpoint \(label)"
            case .methodNotAllowed(let allow): "405 Allow: \(allow)"
            case .notFound: "404"
            }
        }

        var label: String {
            if case .endpoint(let label) = self { return label }
            return "other"
        }
    }

    static let propfind = HTTPRequest.Method("PROPFIND")!
    static let others: [HTTPRequest.Method] = [.post, .put, .delete, .patch, .options, propfind]

    /// Every declared route, with the methods it takes and some it does not.
    static var table: [(HTTPRequest.Method, String, Expected)] {
        var rows: [(HTTPRequest.Method, String, Expected)] = []
        for (path, label) in [("/v1/auth-request", "auth-request"), ("/v1/forward-auth", "forward-auth"),
                              ("/healthz", "healthz"), ("/readyz", "readyz"), ("/metrics", "metrics")] {
            rows += [(.get, path, .endpoint(label)), (.head, path, .endpoint(label))]
            rows += others.map { ($0, path, .methodNotAllowed(allow: "GET, HEAD")) }
        }
        for (path, label) in [("/v1/verify", "verify"), ("/v1/inspect", "inspect")] {
            rows.append((.post, path, .endpoint(label)))
            rows += [HTTPRequest.Method.get, .head, .put, .delete, propfind].map { ($0, path, .methodNotAllowed(allow: "POST")) }
        }
        rows += [(.get, "/v1/playback", .endpoint("playback")), (.post, "/v1/playback", .endpoint("playback"))]
        rows += [HTTPRequest.Method.head, .put, .delete, propfind].map { ($0, "/v1/playback", .methodNotAllowed(allow: "GET, POST")) }
        // Envoy: the prefix itself and any path below it, with any method.
        for path in ["/v1/ext-authz", "/v1/ext-authz/", "/v1/ext-authz/hls/a.m3u8", "/v1/ext-authz/healthz"] {
            rows += ([.get, .head] + others).map { ($0, path, .endpoint("ext-authz")) }
        }
        // The mounted debugger takes its prefix and below, and answers its own 404 and 405.
        rows += [(.get, "/debugger", .endpoint("debugger")), (.get, "/debugger/nothing-here", .endpoint("debugger")),
                 (.get, "/debugger/report", .endpoint("debugger")), (propfind, "/debugger", .endpoint("debugger"))]
        // Neither a route nor below a prefix.
        rows += [(.get, "/", .notFound), (.get, "/v1/nothing", .notFound), (.post, "/v1/nothing", .notFound),
                 (.get, "/v1/ext-authzed", .notFound), (.get, "/v1", .notFound), (.get, "/debuggers", .notFound),
                 (.get, "/v1/auth-request/more", .notFound), (propfind, "/v1/verify/more", .notFound)]
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
                        #expect(expected.label == "debugger" && response.headers[.contentSecurityPolicy] != nil,
                                "\(what): \(response.status), expected \(expected)")
                    }
                case .methodNotAllowed(let allow):
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
            for (method, path) in [(HTTPRequest.Method.get, "/v1/playback"), (.post, "/v1/playback"), (.head, "/v1/playback"),
                                   (.get, "/debugger"), (.post, "/debugger/report")] {
                let response = try await client.executeRequest(uri: path, method: method, headers: [:], body: nil)
                #expect(response.status == .notFound, "\(method) \(path)")
            }
        }
    }

    /// Every route the router holds is counted under an endpoint of its own, never `other`.
    @Test func everyDeclaredRouteNamesItsMetric() throws {
        let profiles = try PlaybackExchangeTests.Profiles()
        defer { try? FileManager.default.removeItem(at: profiles.directory) }
        let runtime = try GateFixtures.runtime(["--cdn-profile", try #require(profiles.paths["nginx-secure-link"]), "--debugger"])
        let routes = runtime.routes()
        let declared = routes.router().routes.map(\.path.description) + routes.prefixRoutes.map(\.prefix)
        #expect(Set(declared).count == 10, "\(declared)")
        for path in declared {
            #expect(EndpointMetricsMiddleware.endpoint(route: path) != .other, "\(path)")
        }
    }
}
