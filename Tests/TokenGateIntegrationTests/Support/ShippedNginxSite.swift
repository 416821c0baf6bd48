import Foundation

@testable import GateTestSupport

/// The shipped nginx site (`deploy/nginx/`) as the tests run it:
/// `tokengate.conf` with its ports and log path substituted (and, when asked,
/// the players' origin, an HTTPS listener and test-only lines in its server
/// block), and every other `.conf` file there but the edge's as a snippet it includes
/// (`snippets/<name>`, under the test nginx's prefix, where an installed site
/// has them under /etc/nginx/).
struct ShippedNginxSite {
    /// The http-level text, for ``Nginx/init(http:port:files:configFiles:)``.
    var http: String
    /// The included files, for `configFiles:`.
    var snippets: [String: String]
    /// How long nginx leaves a gate it could not reach out of the rotation
    /// (the `fail_timeout` of the site's gate line; nginx's default, 10 s, without one).
    var gateFailTimeout: Double

    static let directory = GateFixtures.repository.appendingPathComponent("deploy/nginx")
    /// The origin the shipped site lists for web players.
    static let exampleOrigin = "https://player.example.com"

    struct HTTPS {
        var port: Int
        var certificate: String
        var key: String
    }

    /// Throws when the shipped file no longer holds a line a substitution
    /// needs (the file's shape is part of its contract with the tests).
    /// `directory`: where the site's files are (the repository's `deploy/nginx`,
    /// or the copy an installed package put under /usr/share).
    /// `moreGates`: further gates in `upstream tokengate`, a `server` line
    /// each, as an operator adds them for a fleet (docs/DEPLOY.md).
    /// `gateReadTimeout`: replaces the shipped `proxy_read_timeout` of both
    /// locations that proxy to the gate (the auth request's 2 s, the playback
    /// and manifest routes' 5 s). A gate that runs inside the test process
    /// shares its two cooperative threads with every other test running at
    /// that moment, so the shipped values (right for a gate with its own
    /// process) can pass before it is scheduled; a test about outages keeps
    /// the shipped values.
    init(
        gate: Int,
        moreGates: [Int] = [],
        origin: Int,
        port: Int,
        playerOrigin: String? = nil,
        https: HTTPS? = nil,
        serverLines: String = "",
        gateReadTimeout: String? = nil,
        directory: URL = Self.directory
    ) throws {
        let shipped = try String(contentsOf: directory.appendingPathComponent("tokengate.conf"), encoding: .utf8)
        // The gate's server line, with whatever parameters the site gives it, once per gate.
        guard let line = shipped.firstMatch(of: #/server 127\.0\.0\.1:8089(?<parameters>[^;]*);/#) else {
            throw RawHTTP.Failure(description: "deploy/nginx/tokengate.conf no longer holds `server 127.0.0.1:8089…;`, which the tests substitute")
        }
        let parameters = String(line.parameters)
        gateFailTimeout = parameters.firstMatch(of: #/fail_timeout=(?<seconds>[0-9]+)s?/#).flatMap { Double($0.seconds) } ?? 10
        var substitutions = [
            (String(line.0), ([gate] + moreGates).map { "server 127.0.0.1:\($0)\(parameters);" }.joined(separator: "\n    ")),
            ("server 127.0.0.1:8080;", "server 127.0.0.1:\(origin);"),
            ("listen 80;", "listen 127.0.0.1:\(port);"),
            ("/var/log/nginx/tokengate.access.log", "{{prefix}}/logs/tokengate.access.log"),
        ]
        if let playerOrigin {
            substitutions.append(("\"\(Self.exampleOrigin)\"", "\"\(playerOrigin)\""))
        }
        if let https {
            substitutions += [
                ("# listen 443 ssl;", "listen 127.0.0.1:\(https.port) ssl;"),
                ("# ssl_certificate     /etc/ssl/certs/media.example.com.pem;", "ssl_certificate \(https.certificate);"),
                ("# ssl_certificate_key /etc/ssl/private/media.example.com.key;", "ssl_certificate_key \(https.key);"),
            ]
        }
        if let gateReadTimeout {
            substitutions += [
                ("proxy_read_timeout 2s;", "proxy_read_timeout \(gateReadTimeout);"),
                ("proxy_read_timeout 5s;", "proxy_read_timeout \(gateReadTimeout);"),
            ]
        }
        if !serverLines.isEmpty {
            substitutions.append(("server_name media.example.com;", "server_name media.example.com;\n" + serverLines))
        }
        var site = shipped
        for (old, new) in substitutions {
            guard site.contains(old) else {
                throw RawHTTP.Failure(description: "deploy/nginx/tokengate.conf no longer holds `\(old)`, which the tests substitute")
            }
            site = site.replacingOccurrences(of: old, with: new)
        }
        http = site
        snippets = [:]
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        // The edge (tokengate-edge.conf) is a site of its own, not a snippet of this one.
        for name in names where name.hasSuffix(".conf") && name != "tokengate.conf" && name != "tokengate-edge.conf" {
            snippets["snippets/\(name)"] = try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
        }
    }

    /// A self-signed certificate and its key for `names`, made by `openssl` in
    /// `directory`; nil when openssl is not installed.
    static func selfSignedCertificate(in directory: URL, names: [String] = ["media.test", "localhost"]) throws -> (certificate: String, key: String)?
    {
        guard let openssl = Browser.find(["openssl"]) else { return nil }
        let certificate = directory.appendingPathComponent("site.pem").path
        let key = directory.appendingPathComponent("site.key").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: openssl)
        process.arguments = [
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=\(names[0])",
            "-addext", "subjectAltName=" + names.map { "DNS:\($0)" }.joined(separator: ",") + ",IP:127.0.0.1",
            "-keyout", key, "-out", certificate,
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw RawHTTP.Failure(description: "openssl req failed: \(process.terminationStatus)") }
        return (certificate, key)
    }
}
