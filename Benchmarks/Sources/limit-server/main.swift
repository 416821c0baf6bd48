// The limit server (docs/DESIGN.md#the-figures-that-decide): the smallest HTTP/1.1
// server that does the gate's job for a media token with swift-nio alone —
// cut the request from the bytes, take the token from `X-Original-URI`, verify it with the
// library (the same TokenVerifier and in-memory replay store as the gate),
// answer 200, 401 or 403 with `X-Token-Status`. No Hummingbird, no async
// hop: the verification runs on the event loop that read the request. It is
// the ceiling a framework-based gate is compared with, in the same run.
//
// `--codec` says how a request is read and its answer written, so that a
// figure of the gate can be divided into what HTTP/1 costs and what the gate
// does (docs/PERFORMANCE.md, "The limit server with NIO's codec"):
// - `bytes` (the default, the limit of the figure that decides): the head cut from
//   the connection's bytes, one prepared answer per status;
// - `nio`: NIO's HTTP/1 server codec (llhttp, `HTTPRequestHead`,
//   `HTTPResponseEncoder`), the codec the gate reads and writes with;
// - `httptypes`: the same, each head made into an `HTTPTypes` request and each
//   answer from an `HTTPTypes` response, as the gate's routes take them.
//
//   limit-server --listen HOST:PORT --key PATH --requestor ID --resource ID [--replay memory|off] [--codec bytes|nio|httptypes]
import EntitlementTokens
import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypesHTTP1
import NIOPosix

struct Options {
    var host = "127.0.0.1"
    var port = 8091
    var keys: [String] = []
    var requestor = ""
    var resource = ""
    var replay = "memory"
    var codec = "bytes"

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
            case "--codec": codec = value()
            default: fail("unknown option \(arguments[index])")
            }
            index += 1
        }
        guard !keys.isEmpty, !requestor.isEmpty, !resource.isEmpty, ["memory", "off"].contains(replay),
            ["bytes", "nio", "httptypes"].contains(codec)
        else {
            fail("usage: limit-server --listen HOST:PORT --key PATH --requestor ID --resource ID [--replay memory|off] [--codec bytes|nio|httptypes]")
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
        while let headLength = Self.headLength(bytes) {
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

    /// The length of the first head in `bytes` through its empty line, or nil
    /// while it is incomplete: a byte loop over the buffer (`firstRange(of:)` on a
    /// `ByteBufferView` is an unspecialised generic search, a metadata lookup a step).
    static func headLength(_ bytes: ByteBuffer) -> Int? {
        bytes.withUnsafeReadableBytes { raw in
            var index = 3
            while index < raw.count {
                if raw[index] == 10, raw[index - 1] == 13, raw[index - 2] == 10, raw[index - 3] == 13 { return index + 1 }
                index += 1
            }
            return nil
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if wrote {
            wrote = false
            context.flush()
        }
    }

    /// The answer's key and whether the connection stays open. Read on the
    /// head's bytes, as the gate reads a request: no `String`, no `Character`
    /// (grapheme breaking over a 1 KB token costs more than its signature check).
    private func answer(_ head: ByteBuffer) -> (String, Bool) {
        head.withUnsafeReadableBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            return Self.answer(bytes, verifier: verifier, expectations: expectations)
        }
    }

    private static func answer(_ bytes: UnsafeBufferPointer<UInt8>, verifier: TokenVerifier, expectations: RequestExpectations) -> (String, Bool) {
        // Lines end with CR LF; the head's last line is empty.
        var lines: [Range<Int>] = []
        var start = 0
        var index = 0
        while index + 1 < bytes.count {
            if bytes[index] == 13, bytes[index + 1] == 10 {
                if index > start { lines.append(start..<index) }
                start = index + 2
                index += 2
            } else {
                index += 1
            }
        }
        guard let requestLine = lines.first else { return ("bad-request", false) }
        let parts = bytes[requestLine].split(separator: 32)
        guard parts.count == 3 else { return ("bad-request", false) }
        let method = parts[0]
        guard method.elementsEqual("GET".utf8) || method.elementsEqual("HEAD".utf8) else { return ("bad-request", false) }
        var keepAlive = parts[2].elementsEqual("HTTP/1.1".utf8)
        var originalURI: Slice<UnsafeBufferPointer<UInt8>>?
        for line in lines.dropFirst() {
            let text = bytes[line]
            guard let colon = text.firstIndex(of: 58) else { return ("bad-request", false) }
            let name = text[..<colon]
            let value = text[(colon + 1)...].drop { $0 == 32 || $0 == 9 }
            if equalsIgnoringCase(name, "x-original-uri") {
                originalURI = value
            } else if equalsIgnoringCase(name, "connection") {
                let close = equalsIgnoringCase(value, "close")
                keepAlive = !close && (keepAlive || equalsIgnoringCase(value, "keep-alive"))
            } else if equalsIgnoringCase(name, "content-length"), !value.elementsEqual("0".utf8) {
                return ("bad-request", false)
            }
        }
        return (answerKey(target: parts[1], originalURI: originalURI, verifier: verifier, expectations: expectations), keepAlive)
    }

    /// The answer to a request for `target` (path and query) with `X-Original-URI`
    /// `originalURI`: the route by its path, then the token's verdict. Every codec's.
    static func answerKey(
        target: Slice<UnsafeBufferPointer<UInt8>>,
        originalURI: Slice<UnsafeBufferPointer<UInt8>>?,
        verifier: TokenVerifier,
        expectations: RequestExpectations
    ) -> String {
        let path = target.prefix { $0 != 63 }
        if path.elementsEqual("/healthz".utf8) { return "healthz" }
        guard path.elementsEqual("/v1/auth-request".utf8) else { return "not-found" }
        guard let uri = originalURI, let token = token(in: uri) else { return "NO_TOKEN" }
        let verdict: Verdict = verifier.verify(token, expecting: expectations)
        return verdict.status.rawValue
    }

    /// ASCII case-insensitive comparison with a lowercase name.
    static func equalsIgnoringCase(_ bytes: Slice<UnsafeBufferPointer<UInt8>>, _ lowercase: StaticString) -> Bool {
        guard bytes.count == lowercase.utf8CodeUnitCount else { return false }
        var other = lowercase.utf8Start
        for byte in bytes {
            let folded = byte >= 65 && byte <= 90 ? byte | 0x20 : byte
            guard folded == other.pointee else { return false }
            other += 1
        }
        return true
    }

    /// The raw value of `token` (else `auth`) in the query, which ends at `#`.
    static func token(in uri: Slice<UnsafeBufferPointer<UInt8>>) -> Slice<UnsafeBufferPointer<UInt8>>? {
        guard let question = uri.firstIndex(of: 63) else { return nil }
        let query = uri[(question + 1)...].prefix { $0 != 35 }
        for name in ["token=", "auth="] {
            for pair in query.split(separator: 38, omittingEmptySubsequences: true) where pair.starts(with: name.utf8) {
                let value = pair.dropFirst(name.utf8.count)
                return value.isEmpty ? nil : value
            }
        }
        return nil
    }

    static func httpStatus(_ status: VerificationStatus) -> Int {
        switch status {
        case .validToken: 200
        case .invalidTokenFormat, .tokenExpired, .tokenNotYetValid: 401
        case .replayCheckUnavailable: 503
        default: 403
        }
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
            let pipeline = channel.pipeline.syncOperations
            switch options.codec {
            case "bytes":
                try pipeline.addHandler(LimitHandler(verifier: verifier, expectations: expectations))
            default:
                try pipeline.configureHTTPServerPipeline(withPipeliningAssistance: false, withErrorHandling: false)
                try pipeline.addHandler(
                    CodecLimitHandler(verifier: verifier, expectations: expectations, throughHTTPTypes: options.codec == "httptypes")
                )
            }
        }
    }
let server = try bootstrap.bind(host: options.host, port: options.port).wait()
print("limit-server: listening on \(server.localAddress.map { "\($0)" } ?? "?")")
try server.closeFuture.wait()
