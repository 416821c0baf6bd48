import EntitlementTokens
import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypesHTTP1

/// The limit server's job read and answered through NIO's HTTP/1 server codec
/// (`--codec nio`), and with `throughHTTPTypes` each head made into an
/// `HTTPTypes` request and each answer written from an `HTTPTypes` response
/// (`--codec httptypes`), as the gate converts them: the same routes, the same
/// verification and the same statuses as `LimitHandler`, so that the rates of
/// the three differ by the codec alone. What it adds to the codec is as little
/// as the codec allows: the token found by byte in the header's own UTF-8, and
/// each answer's fields made once.
final class CodecLimitHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    struct Answer {
        var key: String
        var keepAlive: Bool
        var version: HTTPVersion
    }

    let verifier: TokenVerifier
    let expectations: RequestExpectations
    let throughHTTPTypes: Bool
    private var answer: Answer?
    private var wrote = false

    /// Each status's answer head: the status and its fields, with and without `Connection: close`.
    private struct Prepared {
        var status: HTTPResponseStatus
        var headers: HTTPHeaders
        var response: HTTPResponse
    }

    private static let tokenStatus = HTTPField.Name("X-Token-Status")!

    private static let prepared: [String: Prepared] = {
        var prepared: [String: Prepared] = [:]
        func add(_ key: String, _ code: Int, _ tokenStatus: String?) {
            var headers = HTTPHeaders([("Content-Length", "0"), ("Cache-Control", "no-store")])
            var fields: HTTPFields = [.contentLength: "0", .cacheControl: "no-store"]
            if let tokenStatus {
                headers.add(name: "X-Token-Status", value: tokenStatus)
                fields[CodecLimitHandler.tokenStatus] = tokenStatus
            }
            prepared[key] = Prepared(
                status: HTTPResponseStatus(statusCode: code),
                headers: headers,
                response: HTTPResponse(status: .init(code: code), headerFields: fields)
            )
        }
        add("healthz", 200, nil)
        add("not-found", 404, nil)
        add("bad-request", 400, nil)
        add("NO_TOKEN", 401, "NO_TOKEN")
        for status in VerificationStatus.allCases {
            add(status.rawValue, LimitHandler.httpStatus(status), status.rawValue)
        }
        return prepared
    }()

    init(verifier: TokenVerifier, expectations: RequestExpectations, throughHTTPTypes: Bool) {
        self.verifier = verifier
        self.expectations = expectations
        self.throughHTTPTypes = throughHTTPTypes
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            let key = throughHTTPTypes ? judge(typedRequest(head)) : judge(path: head.uri, originalURI: head.headers.first(name: "X-Original-URI"))
            answer = Answer(key: key, keepAlive: head.isKeepAlive, version: head.version)
        case .body:
            break  // GET and HEAD only, as nginx's auth subrequest sends them; a body is not read.
        case .end:
            guard let answer else { return }
            self.answer = nil
            write(answer, context: context)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if wrote {
            wrote = false
            context.flush()
        }
    }

    /// What the gate's reading of a head costs before its routes see it
    /// (the gate's `HTTP1ToHTTPTypesCodec` for a target in origin form).
    private func typedRequest(_ head: HTTPRequestHead) -> HTTPRequest? {
        guard let method = try? HTTPRequest.Method(head.method) else { return nil }
        return HTTPRequest(
            method: method,
            scheme: "http",
            authority: head.headers.first(name: "Host"),
            path: head.uri,
            headerFields: HTTPFields(head.headers, splitCookie: false)
        )
    }

    private static let originalURI = HTTPField.Name("X-Original-URI")!

    private func judge(_ request: HTTPRequest?) -> String {
        guard let request, let path = request.path else { return "bad-request" }
        return judge(path: path, originalURI: request.headerFields[Self.originalURI])
    }

    private func judge(path: String, originalURI: String?) -> String {
        var path = path
        return path.withUTF8 { target in
            guard var uri = originalURI else {
                return LimitHandler.answerKey(target: target[...], originalURI: nil, verifier: verifier, expectations: expectations)
            }
            return uri.withUTF8 { uri in
                LimitHandler.answerKey(target: target[...], originalURI: uri[...], verifier: verifier, expectations: expectations)
            }
        }
    }

    private func write(_ answer: Answer, context: ChannelHandlerContext) {
        let prepared = Self.prepared[answer.key]!
        let head: HTTPResponseHead
        if throughHTTPTypes {
            var response = prepared.response
            if !answer.keepAlive { response.headerFields[.connection] = "close" }
            head = HTTPResponseHead(response)
        } else {
            var headers = prepared.headers
            if !answer.keepAlive { headers.add(name: "Connection", value: "close") }
            head = HTTPResponseHead(version: answer.version, status: prepared.status, headers: headers)
        }
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        if answer.keepAlive {
            context.write(wrapOutboundOut(.end(nil)), promise: nil)
            wrote = true
        } else {
            context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in context.close(promise: nil) }
        }
    }
}
