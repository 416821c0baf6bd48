import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1

/// NIO's HTTP/1 parts as HTTPTypes parts, both ways: what NIOHTTPTypes'
/// `HTTP1ToHTTPServerCodec` does in Hummingbird's pipeline, with one step
/// left out where it cannot change the answer. That codec finds a request's
/// path by parsing the request target as a URL (Foundation's
/// `URLComponents`), for the absolute form's sake (`GET http://host/p`,
/// RFC 9112 §3.2.2); the origin form (`/p?q`), which a proxy and a player
/// send, parses as a URL without a scheme and comes back as it was. So a
/// target that begins with `/` is the path as it stands, and any other goes
/// through NIOHTTPTypes' own conversion: the same `HTTPRequest` either way
/// (`HTTP1ToHTTPTypesCodecTests` holds the two to it), without a URL parse
/// that costs more than the gate's reading of the token in the query.
final class HTTP1ToHTTPTypesCodec: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// The request as NIOHTTPTypes makes it, over plain HTTP (the gate's listener has no TLS).
    static func request(_ head: HTTPRequestHead) throws -> HTTPRequest {
        guard head.uri.utf8.first == UInt8(ascii: "/") else {
            return try HTTPRequest(head, secure: false, splitCookie: false)
        }
        return HTTPRequest(
            method: try HTTPRequest.Method(head.method),
            scheme: "http",
            authority: head.headers.first(name: "Host"),
            path: head.uri,
            headerFields: HTTPFields(head.headers, splitCookie: false)
        )
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            do {
                context.fireChannelRead(wrapInboundOut(.head(try Self.request(head))))
            } catch {
                context.fireErrorCaught(error)
            }
        case .body(let body):
            context.fireChannelRead(wrapInboundOut(.body(body)))
        case .end(let trailers):
            context.fireChannelRead(wrapInboundOut(.end(trailers.map { HTTPFields($0, splitCookie: false) })))
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let response):
            context.write(wrapOutboundOut(.head(HTTPResponseHead(response))), promise: promise)
        case .body(let body):
            context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: promise)
        case .end(let trailers):
            context.write(wrapOutboundOut(.end(trailers.map(HTTPHeaders.init))), promise: promise)
        }
    }
}
