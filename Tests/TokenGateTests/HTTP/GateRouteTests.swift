import HTTPTypes
import Testing

@testable import TokenGate

/// ``GateRoute``'s reading of a request target: the origin form of an
/// absolute-form target, the path without its query or fragment, and the
/// routes answered from the event loop.
struct GateRouteTests {
    static func head(_ target: String, _ method: HTTPRequest.Method = .get) -> HTTPRequest {
        HTTPRequest(method: method, scheme: nil, authority: "gate", path: target)
    }

    @Test(arguments: [
        ("/v1/auth-request", "/v1/auth-request"),
        ("/v1/auth-request?a=b", "/v1/auth-request?a=b"),
        ("http://gate:8089/v1/auth-request?a=b", "/v1/auth-request?a=b"),
        ("https://gate/v1/manifest/hls/a.m3u8", "/v1/manifest/hls/a.m3u8"),
        ("http://gate?x=1", "?x=1"),
        ("http://gate", ""),
        ("*", "*"),
    ])
    func theOriginForm(target: String, expected: String) {
        #expect(GateRoute.originForm(of: target) == expected[...])
    }

    @Test(arguments: [("/a/b?c#d", "/a/b"), ("/a#b?c", "/a"), ("/a", "/a"), ("?a", ""), ("", "")])
    func thePath(target: String, expected: String) {
        #expect(GateRoute.path(of: target[...]) == expected[...])
    }

    @Test func whichRoutesAreAnsweredOnTheLoop() {
        let mounts = GateRoute.Mounts(playback: true, manifests: true)
        let onTheLoop = [
            "/v1/auth-request", "/v1/forward-auth?x=1", "/v1/ext-authz", "/v1/ext-authz/hls/a.ts",
            "http://gate/v1/auth-request", "/v1/manifest/hls/a.m3u8", "/v1/playback", "/v1/playback/renew",
        ]
        for target in onTheLoop {
            #expect(GateRoute(Self.head(target), mounts: mounts).isAnsweredOnTheLoop, "\(target)")
        }
        let framework = ["/v1/verify", "/v1/inspect", "/healthz", "/metrics", "/readyz", "/nothing"]
        for target in framework {
            #expect(!GateRoute(Self.head(target), mounts: mounts).isAnsweredOnTheLoop, "\(target)")
        }
        // The playback routes read their JSON up to its bound; the others drop a body.
        for target in ["/v1/playback", "/v1/playback/renew"] {
            #expect(GateRoute(Self.head(target), mounts: mounts).bodyLimit == PlaybackEndpoints.maximumBodyBytes)
        }
        #expect(GateRoute(Self.head("/v1/auth-request"), mounts: mounts).bodyLimit == nil)
        // Without a manifest profile the manifest route is not there.
        #expect(GateRoute(Self.head("/v1/manifest/hls/a.m3u8"), mounts: .init()).endpoint == .other)
    }

    @Test func envoysOriginalRequestIsTheTargetAfterThePrefix() throws {
        guard case .auth(let route) = GateRoute(Self.head("/v1/ext-authz/hls/a.ts?token=x", .post), mounts: .init()) else {
            Issue.record("not an auth route")
            return
        }
        #expect(route.originalURI == "/hls/a.ts?token=x")
        #expect(route.answers(.post))
        guard case .auth(let bare) = GateRoute(Self.head("/v1/ext-authz"), mounts: .init()) else { return }
        #expect(bare.originalURI == "/")
    }

    @Test func aProbeAskedWithAnotherMethodIsCountedAsOther() {
        for path in ["/healthz", "/readyz", "/metrics"] {
            #expect(GateRoute(Self.head(path, .post), mounts: .init()).endpoint == .other)
            #expect(GateRoute(Self.head(path, .head), mounts: .init()).endpoint != .other)
        }
    }
}
