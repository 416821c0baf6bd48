// The limit server (docs/DESIGN.md#the-figures-that-decide): the smallest HTTP/1.1
// server that does the gate's job for a media token with swift-nio alone —
// cut the request from the bytes, take the token from `X-Original-URI`, verify it with the
// library (the same TokenVerifier and in-memory replay store as the gate),
// answer 200, 401 or 403 with `X-Token-Status`. No Hummingbird, no async
// hop: the verification runs on the event loop that read the request. It is
// the ceiling a framework-based gate is compared with, in the same run.
//
//   limit-server --listen HOST:PORT --key PATH --requestor ID --resource ID [--replay memory|off]
import EntitlementTokens
import NIOCore
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

/// The tightest HTTP/1.1 swift-nio allows for this job: no HTTP codec in the
/// pipeline. Requests are cut from the connection's bytes (a head ends at an
/// empty line; GET and HEAD without a body, as wrk and nginx's auth subrequest
/// send them), several per read when a client pipelines, and each answer is a
/// ready-made byte string per status, written as the request is read and
/// flushed once per read.
final class LimitHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    let verifier: TokenVerifier
    let expectations: RequestExpectations
    private var pending: ByteBuffer?
    private var wrote = false

    /// Every answer this server gives, encoded once: (keep-alive, close).
    private static let answers: [String: (ByteBuffer, ByteBuffer)] = {
        var answers: [String: (ByteBuffer, ByteBuffer)] = [:]
        func add(_ key: String, _ statusLine: String, _ tokenStatus: String?) {
            let head =
                "HTTP/1.1 \(statusLine)\r\nContent-Length: 0\r\nCache-Control: no-store\r\n"
                + (tokenStatus.map { "X-Token-Status: \($0)\r\n" } ?? "")
            answers[key] = (ByteBuffer(string: head + "\r\n"), ByteBuffer(string: head + "Connection: close\r\n\r\n"))
        }
        add("healthz", "200 OK", nil)
        add("not-found", "404 Not Found", nil)
        add("bad-request", "400 Bad Request", nil)
        add("NO_TOKEN", "401 Unauthorized", "NO_TOKEN")
        for status in VerificationStatus.allCases {
            let line =
                switch LimitHandler.httpStatus(status) {
                case 200: "200 OK"
                case 401: "401 Unauthorized"
                case 503: "503 Service Unavailable"
                default: "403 Forbidden"
                }
            add(status.rawValue, line, status.rawValue)
        }
        return answers
    }()

    init(verifier: TokenVerifier, expectations: RequestExpectations) {
        self.verifier = verifier
        self.expectations = expectations
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        if var earlier = pending {
            earlier.writeBuffer(&bytes)
            bytes = earlier
            pending = nil
        }
        while let end = bytes.readableBytesView.firstRange(of: [13, 10, 13, 10]) {
            let headLength = bytes.readableBytesView.distance(from: bytes.readableBytesView.startIndex, to: end.upperBound)
            let head = bytes.readSlice(length: headLength)!
            let (key, keepAlive) = answer(head)
            let encoded = Self.answers[key]!
            context.write(wrapOutboundOut(keepAlive ? encoded.0 : encoded.1), promise: nil)
            wrote = true
            if !keepAlive {
                context.writeAndFlush(wrapOutboundOut(ByteBuffer())).whenComplete { _ in context.close(promise: nil) }
                wrote = false
                return
            }
        }
        if bytes.readableBytes > 0 {
            // A head is at most 16 KiB, as nginx's large_client_header_buffers would allow.
            guard bytes.readableBytes <= 16 << 10 else { return context.close(promise: nil) }
            pending = bytes
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if wrote {
            wrote = false
            context.flush()
        }
    }

    /// The answer's key and whether the connection stays open.
    private func answer(_ head: ByteBuffer) -> (String, Bool) {
        let text = String(buffer: head)
        var lines = text.split(separator: "\r\n", omittingEmptySubsequences: true)[...]
        guard let requestLine = lines.popFirst() else { return ("bad-request", false) }
        let parts = requestLine.split(separator: " ")
        guard parts.count == 3, parts[0] == "GET" || parts[0] == "HEAD" else { return ("bad-request", false) }
        var keepAlive = parts[2] == "HTTP/1.1"
        var originalURI: Substring?
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { return ("bad-request", false) }
            let name = line[..<colon]
            let value = line[line.index(after: colon)...].drop { $0 == " " || $0 == "\t" }
            if name.count == 14, name.lowercased() == "x-original-uri" {
                originalURI = value
            } else if name.count == 10, name.lowercased() == "connection" {
                keepAlive = value.lowercased() != "close" && (keepAlive || value.lowercased() == "keep-alive")
            } else if name.count == 14, name.lowercased() == "content-length", value != "0" {
                return ("bad-request", false)
            }
        }
        let path = parts[1].prefix { $0 != "?" }
        switch path {
        case "/healthz": return ("healthz", keepAlive)
        case "/v1/auth-request": break
        default: return ("not-found", keepAlive)
        }
        guard let uri = originalURI, let token = Self.token(in: uri) else { return ("NO_TOKEN", keepAlive) }
        let verdict: Verdict = verifier.verify(token, expecting: expectations)
        return (verdict.status.rawValue, keepAlive)
    }

    static func httpStatus(_ status: VerificationStatus) -> Int {
        switch status {
        case .validToken: 200
        case .invalidTokenFormat, .tokenExpired, .tokenNotYetValid: 401
        case .replayCheckUnavailable: 503
        default: 403
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
let verifier = TokenVerifier(
    signature: .trustedKeys(ring),
    policy: VerificationPolicy(
        requestorID: options.requestor,
        replayStore: options.replay == "memory" ? InMemoryReplayStore() : nil
    )
)
let expectations = RequestExpectations(resourceID: options.resource)

let group = MultiThreadedEventLoopGroup.singleton
let bootstrap = ServerBootstrap(group: group)
    .serverChannelOption(.backlog, value: 1024)
    .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
    .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
    .childChannelInitializer { channel in
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(LimitHandler(verifier: verifier, expectations: expectations))
        }
    }
let server = try bootstrap.bind(host: options.host, port: options.port).wait()
print("limit-server: listening on \(server.localAddress.map { "\($0)" } ?? "?")")
try server.closeFuture.wait()
