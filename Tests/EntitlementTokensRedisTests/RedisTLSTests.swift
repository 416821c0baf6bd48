import IntegrationSupport
import EntitlementTokens
@testable import EntitlementTokensRedis
import Foundation
import Testing

/// `rediss://` against redis-server's own TLS port (Debian builds it with
/// TLS), with a throw-away CA made by the openssl CLI.
extension RedisIntegrationTests {
    @Suite("Redis: TLS")
    struct RedisTLSTests {
        /// A CA, and a server certificate it signed for localhost and 127.0.0.1.
        struct Certificates {
            let directory: URL
            var caFile: String { directory.appendingPathComponent("ca.pem").path }
            var otherCAFile: String { directory.appendingPathComponent("other-ca.pem").path }
            var certificateFile: String { directory.appendingPathComponent("server.pem").path }
            var keyFile: String { directory.appendingPathComponent("server.key").path }
        }

        static func makeCertificates() throws -> Certificates {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("redis-tls-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
            try openssl(["req", "-x509"] + ec + ["-keyout", "ca.key", "-out", "ca.pem", "-days", "1", "-subj", "/CN=tokeninspect test CA"], in: directory)
            try openssl(["req", "-x509"] + ec + ["-keyout", "other-ca.key", "-out", "other-ca.pem", "-days", "1", "-subj", "/CN=another CA"], in: directory)
            try openssl(["req", "-new"] + ec + ["-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost"], in: directory)
            try "subjectAltName=DNS:localhost,IP:127.0.0.1\n".write(to: directory.appendingPathComponent("san.ext"), atomically: true, encoding: .utf8)
            try openssl(["x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                         "-out", "server.pem", "-days", "1", "-extfile", "san.ext"], in: directory)
            return Certificates(directory: directory)
        }

        static func openssl(_ arguments: [String], in directory: URL) throws {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["openssl"] + arguments
            process.currentDirectoryURL = directory
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else {
                throw RedisServerError(description: "openssl \(arguments.joined(separator: " ")) failed")
            }
        }

        func withTLSServer(_ body: (RedisServer, Certificates) async throws -> Void) async throws {
            let certificates = try Self.makeCertificates()
            defer { try? FileManager.default.removeItem(at: certificates.directory) }
            try await withRedisServer(["--tls-cert-file", certificates.certificateFile, "--tls-key-file", certificates.keyFile,
                                       "--tls-ca-cert-file", certificates.caFile, "--tls-auth-clients", "no"],
                                      portArgument: "--tls-port") { server in
                try await body(server, certificates)
            }
        }

        @Test("rediss:// with the CA file: accepted once, by IP address and by name")
        func trusted() async throws {
            try await withTLSServer { server, certificates in
                var generator = SplitMix64(seed: 10)
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
                var generator = SplitMix64(seed: 11)
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

        @Test("plain redis:// to a TLS port is unavailable, not a hang")
        func plainToTLS() async throws {
            try await withTLSServer { server, _ in
                let store = try makeStore("redis://127.0.0.1:\(server.port)", timeout: .milliseconds(50))
                var generator = SplitMix64(seed: 12)
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
