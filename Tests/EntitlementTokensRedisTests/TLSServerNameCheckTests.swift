import EntitlementTokens
import Foundation
import NIOCore
import NIOEmbedded
import NIOTLS
import Synchronization
import Testing

@testable import EntitlementTokensRedis

/// `tls-server-name=` (docs/DESIGN.md#trust-in-sentinels), without a server: the check holds
/// the login until the handshake completes, and a certificate that does not
/// name the host gets none of it. The accepted path runs against a real TLS
/// `redis-server` in `RedisTLSTests.serverName`.
@Suite("Redis: the tls-server-name check")
struct TLSServerNameCheckTests {
    @Test func nothingIsWrittenBeforeTheHandshakeAndNothingAtAllToAPeerThatIsNotNamed() throws {
        let channel = EmbeddedChannel(handler: TLSServerNameCheck(name: "redis.internal", endpointDescription: "redis.internal:6380"))
        let login = channel.eventLoop.makePromise(of: Void.self)
        channel.write(ByteBuffer(string: "*2\r\n$4\r\nAUTH\r\n$6\r\nsecret\r\n"), promise: login)
        channel.flush()
        #expect(try channel.readOutbound(as: ByteBuffer.self) == nil, "held until the handshake")
        // No TLS handler here, so no peer certificate: the name is not held, as for a certificate without it.
        channel.pipeline.fireUserInboundEventTriggered(TLSUserEvent.handshakeCompleted(negotiatedProtocol: nil))
        #expect(try channel.readOutbound(as: ByteBuffer.self) == nil, "the password never leaves")
        let failure = Mutex<(any Error)?>(nil)
        login.futureResult.whenFailure { error in failure.withLock { $0 = error } }
        channel.embeddedEventLoop.run()
        let error = try #require(failure.withLock { $0 } as? RedisClientError)
        #expect(error.code == .tlsFailed && error.message.contains("does not name 'redis.internal'"), "\(error)")
        #expect(!channel.isActive)
        #expect(throws: RedisClientError.self) { try channel.throwIfErrorCaught() }
    }

    @Test func theNameAloneCounts() throws {
        // A certificate for DNS:localhost and IP:127.0.0.1, made by the openssl CLI.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("names-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", "key.pem", "-out", "cert.der", "-outform", "DER", "-days", "1", "-subj", "/CN=localhost",
            "-addext", "subjectAltName=DNS:localhost,DNS:*.redis.test,IP:127.0.0.1",
        ]
        process.currentDirectoryURL = directory
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0)
        let der = [UInt8](try Data(contentsOf: directory.appendingPathComponent("cert.der")))
        #expect(CertificateNames.names("localhost", certificateDER: der))
        #expect(CertificateNames.names("LocalHost", certificateDER: der), "names compare without case")
        #expect(CertificateNames.names("node-1.redis.test", certificateDER: der), "a whole left-most wildcard label")
        #expect(!CertificateNames.names("a.b.redis.test", certificateDER: der), "a wildcard is one label")
        #expect(!CertificateNames.names("127.0.0.1", certificateDER: der), "an address entry never names a host")
        #expect(!CertificateNames.names("redis.other.test", certificateDER: der))
        #expect(!CertificateNames.names("localhost\u{0}.evil", certificateDER: der))
        #expect(!CertificateNames.names("localhost", certificateDER: der + [0]), "one certificate, nothing after it")
        #expect(!CertificateNames.names("localhost", certificateDER: []))
    }
}
