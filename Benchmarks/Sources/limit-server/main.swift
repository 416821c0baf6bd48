// The limit server (docs/DESIGN.md#the-figures-that-decide): the smallest HTTP/1.1
// server that does the gate's job for a media token with swift-nio alone —
// parse the request, take the token from `X-Original-URI`, verify it with the
// library (the same TokenVerifier and in-memory replay store as the gate),
// answer 200, 401 or 403 with `X-Token-Status`. No Hummingbird, no async
// hop: the verification runs on the event loop that read the request. It is
// the ceiling a framework-based gate is compared with, in the same run.
//
//   limit-server --listen HOST:PORT --key PATH --requestor ID --resource ID [--replay memory|off]
import EntitlementTokens
import NIOCore
import NIOHTTP1
import NIOPosix

struct Options {
    var host = "127.0.0.1"
    var port = 8091
    var keys: [String] = []
    var requestor = ""
    var resource = ""
    var replay = "memory"

    init(_ arguments: [String]) {
        var index = 0
        func value() -> String {
            index += 1
            guard index < arguments.count else { fail("\(arguments[index - 1]) needs a value") }
            return arguments[index]
        }
        while index < arguments.count {
            switch arguments[index] {
            case "--listen":
                let text = value()
                guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]) else { fail("--listen HOST:PORT") }
                host = String(text[..<colon])
                self.port = port
            case "--key": keys.append(value())
            case "--requestor": requestor = value()
            case "--resource": resource = value()
            case "--replay": replay = value()
            default: fail("unknown option \(arguments[index])")
            }
            index += 1
        }
        guard !keys.isEmpty, !requestor.isEmpty, !resource.isEmpty, ["memory", "off"].contains(replay) else {
            fail("usage: limit-server --listen HOST:PORT --key PATH --requestor ID --resource ID [--replay memory|off]")
        }
    }
}

func fail(_ message: String) -> Never {
    print("limit-server: \(message)")
    exit(64)
}

/// One request at a time per connection (keep-alive, no pipelining needed by wrk or nginx).
final class LimitHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let verifier: TokenVerifier
    let expectations: RequestExpectations
    private var head: HTTPRequestHead?

    init(verifier: TokenVerifier, expectations: RequestExpectations) {
        self.verifier = verifier
        self.expectations = expectations
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let request): head = request
        case .body: break
        case .end:
            guard let request = head else { return }
            head = nil
            let (status, tokenStatus) = answer(request)
            var headers = HTTPHeaders([("Content-Length", "0"), ("Cache-Control", "no-store")])
            if let tokenStatus { headers.add(name: "X-Token-Status", value: tokenStatus) }
            if !request.isKeepAlive { headers.add(name: "Connection", value: "close") }
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: request.version, status: status, headers: headers))), promise: nil)
            let keepAlive = request.isKeepAlive
            context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in
                if !keepAlive { context.close(promise: nil) }
            }
        }
    }

    private func answer(_ request: HTTPRequestHead) -> (HTTPResponseStatus, String?) {
        let path = request.uri.prefix { $0 != "?" }
        switch path {
        case "/healthz": return (.ok, nil)
        case "/v1/auth-request": break
        default: return (.notFound, nil)
        }
        guard let uri = request.headers.first(name: "X-Original-URI"), let token = Self.token(in: uri[...]) else {
            return (.unauthorized, "NO_TOKEN")
        }
        let verdict: Verdict = verifier.verify(token, expecting: expectations)
        switch verdict.status {
        case .validToken: return (.ok, verdict.status.rawValue)
        case .invalidTokenFormat, .tokenExpired, .tokenNotYetValid: return (.unauthorized, verdict.status.rawValue)
        case .replayCheckUnavailable: return (.serviceUnavailable, verdict.status.rawValue)
        default: return (.forbidden, verdict.status.rawValue)
        }
    }

    /// The raw value of `token` (else `auth`) in the query, which ends at `#`.
    static func token(in uri: Substring) -> Substring.UTF8View? {
        guard let question = uri.firstIndex(of: "?") else { return nil }
        let query = uri[uri.index(after: question)...].prefix { $0 != "#" }
        for name in ["token=", "auth="] {
            for pair in query.split(separator: "&") where pair.hasPrefix(name) {
                let value = pair.dropFirst(name.count)
                return value.isEmpty ? nil : value.utf8
            }
        }
        return nil
    }
}

let options = Options(Array(CommandLine.arguments.dropFirst()))
let ring: KeyRing
do {
    ring = try KeyRing.load(paths: options.keys)
} catch {
    fail("cannot load the keys: \(error)")
}
let verifier = TokenVerifier(signature: .trustedKeys(ring), policy: VerificationPolicy(
    requestorID: options.requestor, replayStore: options.replay == "memory" ? InMemoryReplayStore() : nil))
let expectations = RequestExpectations(resourceID: options.resource)

let group = MultiThreadedEventLoopGroup.singleton
let bootstrap = ServerBootstrap(group: group)
    .serverChannelOption(.backlog, value: 1024)
    .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
    .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
    .childChannelInitializer { channel in
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
            try channel.pipeline.syncOperations.addHandler(LimitHandler(verifier: verifier, expectations: expectations))
        }
    }
let server = try bootstrap.bind(host: options.host, port: options.port).wait()
print("limit-server: listening on \(server.localAddress.map { "\($0)" } ?? "?")")
try server.closeFuture.wait()
