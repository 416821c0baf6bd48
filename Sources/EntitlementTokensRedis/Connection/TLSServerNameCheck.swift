internal import EntitlementTokens
internal import NIOCore
internal import NIOSSL
internal import NIOTLS

/// `tls-server-name=` as docs/DESIGN.md#trust-in-sentinels says it: the node's certificate
/// must name that host. SwiftNIO SSL, given the name, verifies the chain but
/// also accepts an IP address entry equal to the address dialled; this
/// handler, right after the TLS handler, checks the name alone
/// (``CertificateNames``) when the handshake completes.
///
/// Until then it holds every write (the login: `AUTH` carries the password),
/// so nothing reaches a node before its name is checked; a node that does not
/// hold the name gets none of them, and the connection closes as `tlsFailed`.
final class TLSServerNameCheck: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// The login is a handful of commands; anything more before the
    /// handshake is a caller that did not wait, refused rather than queued.
    static let maximumHeldWrites = 32

    private enum State {
        case waiting(held: [(ByteBuffer, EventLoopPromise<Void>?)], flushed: Bool)
        case checked
        case refused(RedisClientError)
    }

    private let name: String
    private let endpointDescription: String
    private var state = State.waiting(held: [], flushed: false)

    init(name: String, endpointDescription: String) {
        self.name = name
        self.endpointDescription = endpointDescription
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch state {
        case .checked:
            context.write(data, promise: promise)
        case .refused(let error):
            promise?.fail(error)
        case .waiting(var held, let flushed):
            guard held.count < Self.maximumHeldWrites else {
                refuse(
                    context,
                    RedisClientError(.tlsFailed, "more than \(Self.maximumHeldWrites) writes to \(endpointDescription) before its TLS handshake")
                )
                promise?.fail(RedisClientError(.tlsFailed, "the TLS handshake with \(endpointDescription) did not complete"))
                return
            }
            held.append((unwrapOutboundIn(data), promise))
            state = .waiting(held: held, flushed: flushed)
        }
    }

    func flush(context: ChannelHandlerContext) {
        switch state {
        case .checked: context.flush()
        case .refused: break
        case .waiting(let held, _): state = .waiting(held: held, flushed: true)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .handshakeCompleted = event as? TLSUserEvent, case .waiting(let held, let flushed) = state {
            let certificate = try? context.pipeline.syncOperations.nioSSL_peerCertificate()?.toDERBytes()
            guard let certificate, CertificateNames.names(name, certificateDER: certificate) else {
                refuse(
                    context,
                    RedisClientError(
                        .tlsFailed,
                        "TLS with \(endpointDescription) failed: its certificate does not name '\(name)' (tls-server-name)"
                    )
                )
                return
            }
            state = .checked
            for (data, promise) in held { context.write(wrapOutboundOut(data), promise: promise) }
            if flushed { context.flush() }
        }
        context.fireUserInboundEventTriggered(event)
    }

    private func refuse(_ context: ChannelHandlerContext, _ error: RedisClientError) {
        guard case .waiting(let held, _) = state else { return }
        state = .refused(error)
        for (_, promise) in held { promise?.fail(error) }
        context.fireErrorCaught(error)
        context.close(promise: nil)
    }
}
