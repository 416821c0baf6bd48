import EntitlementTokens
import Foundation
import IntegrationSupport
import Testing
import TokenTestSupport

@testable import EntitlementTokensRedis

/// `rediss://` against redis-server's own TLS port (Debian builds it with
/// TLS), with a throw-away CA made by the openssl CLI.
extension RedisIntegrationTests {
    @Suite("Redis: TLS")
    struct RedisTLSTests {
        func withTLSServer(_ body: (RedisServer, RedisTLSFiles) async throws -> Void) async throws {
            let certificates = try RedisTLSFiles()
            defer { certificates.remove() }
            try await withRedisServer(certificates.serverArguments, portArgument: "--tls-port") { server in
                try await body(server, certificates)
            }
        }

        @Test("rediss:// with the CA file: accepted once, by IP address and by name")
        func trusted() async throws {
            try await withTLSServer { server, certificates in
                var generator = SeededGenerator(seed: 10)
                for host in ["127.0.0.1", "localhost"] {
                    let store = try makeStore("rediss://\(host):\(server.port)", timeout: .seconds(2), trustedCAFile: certificates.caFile)
                    try await store.checkHealth()
                    let identity = randomIdentity(using: &generator)
                    #expect(await store.accept(identity, until: timestamp(plus: 60_000), now: timestamp()) == .accepted)
                    #expect(await store.accept(identity, until: timestamp(plus: 60_000), now: timestamp()) == .replayed)
                    await store.shutdown()
                }
            }
        }

        @Test("a certificate no trusted CA signed is refused: the system store, another CA")
        func untrusted() async throws {
            try await withTLSServer { server, certificates in
                var generator = SeededGenerator(seed: 11)
                for caFile in [nil, certificates.otherCAFile] {
                    let store = try makeStore("rediss://127.0.0.1:\(server.port)", timeout: .seconds(2), trustedCAFile: caFile)
                    let failure = await store.healthFailure()
                    #expect(failure?.code == .tlsFailed, "CA file \(caFile ?? "none"): \(String(describing: failure))")
                    let decision = await store.accept(randomIdentity(using: &generator), until: timestamp(plus: 60_000), now: timestamp())
                    #expect(decision.isUnavailable, "\(decision)")
                    await store.shutdown()
                }
            }
        }

        /// docs/DESIGN.md#trust-in-sentinels: with `tls-server-name=`, the certificate must hold that
        /// name. The server's certificate names `localhost` and `127.0.0.1`; dialled
        /// at 127.0.0.1 with another name, SwiftNIO SSL alone accepts it by its IP
        /// address entry, and the password must not reach it.
        @Test("tls-server-name: a certificate holding the name is accepted; one holding only the address dialled is refused before the login")
        func serverName() async throws {
            try await withTLSServer { server, certificates in
                var generator = SeededGenerator(seed: 13)
                let named = try makeStore(
                    "rediss://127.0.0.1:\(server.port)?tls-server-name=localhost",
                    timeout: .seconds(2),
                    trustedCAFile: certificates.caFile
                )
                try await named.checkHealth()
                #expect(await named.accept(randomIdentity(using: &generator), until: timestamp(plus: 60_000), now: timestamp()) == .accepted)
                await named.shutdown()

                for name in ["redis.other.test", "LOCALHOST.evil"] {
                    let store = try makeStore(
                        "rediss://127.0.0.1:\(server.port)?tls-server-name=\(name)",
                        timeout: .seconds(2),
                        trustedCAFile: certificates.caFile
                    )
                    let failure = await store.healthFailure()
                    #expect(failure?.code == .tlsFailed, "tls-server-name=\(name): \(String(describing: failure))")
                    #expect(failure?.message.contains("does not name") == true, "\(String(describing: failure))")
                    #expect(await store.accept(randomIdentity(using: &generator), until: timestamp(plus: 60_000), now: timestamp()).isUnavailable)
                    await store.shutdown()
                }
            }
        }

        @Test("plain redis:// to a TLS port is unavailable, not a hang")
        func plainToTLS() async throws {
            try await withTLSServer { server, _ in
                let store = try makeStore("redis://127.0.0.1:\(server.port)", timeout: .milliseconds(50))
                var generator = SeededGenerator(seed: 12)
                let (decision, elapsed) = await milliseconds {
                    await store.accept(randomIdentity(using: &generator), until: timestamp(plus: 60_000), now: timestamp())
                }
                #expect(decision.isUnavailable)
                #expect(elapsed <= RedisFaultTests.ceilingMilliseconds)
                await store.shutdown()
            }
        }
    }
}
