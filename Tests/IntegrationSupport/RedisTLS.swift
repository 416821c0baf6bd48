import Foundation

/// A throw-away CA, another CA, and a server certificate the first signed
/// for `localhost` and `127.0.0.1`, made by the openssl CLI in a temporary
/// directory: what `redis-server`, `redis-sentinel` and `redis-cli` need for
/// TLS on loopback. Every node of a test uses the same certificate (its SANs
/// hold the loopback address every node listens on).
public struct RedisTLSFiles: Sendable {
    public let directory: URL
    public var caFile: String { directory.appendingPathComponent("ca.pem").path }
    /// A CA that signed nothing here: trusting only it must refuse every node.
    public var otherCAFile: String { directory.appendingPathComponent("other-ca.pem").path }
    public var certificateFile: String { directory.appendingPathComponent("server.pem").path }
    public var keyFile: String { directory.appendingPathComponent("server.key").path }

    public init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("redis-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        try Self.openssl(
            ["req", "-x509"] + ec + ["-keyout", "ca.key", "-out", "ca.pem", "-days", "1", "-subj", "/CN=tokeninspect test CA"],
            in: directory
        )
        try Self.openssl(
            ["req", "-x509"] + ec + ["-keyout", "other-ca.key", "-out", "other-ca.pem", "-days", "1", "-subj", "/CN=another CA"],
            in: directory
        )
        try Self.openssl(["req", "-new"] + ec + ["-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost"], in: directory)
        try "subjectAltName=DNS:localhost,IP:127.0.0.1\n".write(to: directory.appendingPathComponent("san.ext"), atomically: true, encoding: .utf8)
        try Self.openssl(
            [
                "x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                "-out", "server.pem", "-days", "1", "-extfile", "san.ext",
            ],
            in: directory
        )
    }

    /// `redis-server` options: TLS with this certificate, clients not asked
    /// for one, and TLS to the primary (`tls-replication yes`), so a replica
    /// also announces its TLS port to the primary (`REPLCONF listening-port`),
    /// which is the port the sentinels then name.
    public var serverArguments: [String] {
        [
            "--tls-cert-file", certificateFile, "--tls-key-file", keyFile, "--tls-ca-cert-file", caFile,
            "--tls-auth-clients", "no", "--tls-replication", "yes",
        ]
    }

    /// The same for a sentinel's config file: `tls-replication yes` makes it
    /// speak TLS to the data nodes and the other sentinels.
    public var sentinelConfigLines: [String] {
        [
            "tls-cert-file \(certificateFile)", "tls-key-file \(keyFile)", "tls-ca-cert-file \(caFile)",
            "tls-auth-clients no", "tls-replication yes",
        ]
    }

    /// `redis-cli` options to reach a TLS port.
    public var cliArguments: [String] { ["--tls", "--cacert", caFile] }

    public func remove() {
        try? FileManager.default.removeItem(at: directory)
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
}
