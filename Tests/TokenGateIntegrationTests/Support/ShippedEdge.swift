import CDNTokens
import Foundation

@testable import GateTestSupport

/// The shipped nginx edge (`deploy/nginx/tokengate-edge.conf`) and its
/// profiles (`deploy/cdn/nginx-edge*.profile`) as the tests run them: the
/// edge's port, origin, cache path, log path and secret substituted; the
/// profiles' secret file, edge host and cookie domain substituted. Nothing
/// else changes, so a test that passes here passes on what an operator
/// installs.
///
/// Before anything runs, each profile's `secure-link-md5` must be, with the
/// secret for `$secret`, exactly a `secure_link_md5` line of the edge
/// (``SecureLinkExpression/nginxValue(secretText:)``): the two files are one
/// contract, and a change to one alone fails here with both texts named.
struct ShippedEdge {
    /// The http-level text, for ``Nginx/init(http:port:files:configFiles:)``.
    var http: String
    /// The profile files written, by profile name (`nginx-edge`, `nginx-edge-files`).
    var profiles: [String: String]

    static let configuration = GateFixtures.repository.appendingPathComponent("deploy/nginx/tokengate-edge.conf")
    static let profileDirectory = GateFixtures.repository.appendingPathComponent("deploy/cdn")
    static let profileNames = ["nginx-edge", "nginx-edge-files"]
    /// What the shipped edge holds where the secret goes (an unknown variable: nginx refuses to start on it).
    static let secretPlaceholder = "$REPLACE_WITH_THE_SECRET"
    /// The shipped profiles' names for the edge and the parent domain.
    static let exampleEdge = "https://edge.media.example.com"
    static let exampleDomain = "media.example.com"

    /// A hex secret, as `openssl rand -hex 32` makes: it pastes into nginx's quoted string as it is.
    static let secret = "5ec2e71a4b0c9d8e7f6a5b4c3d2e1f00112233445566778899aabbccddeeff01"

    /// `edge`: the edge's URL origin the profiles name (`http://edge.media.test:<port>`);
    /// `cookieDomain`: the parent domain of the gate's and the edge's names.
    /// `serverLines`: test-only lines added to the edge's server block.
    /// Writes the secret and the profiles into `directory` (removed by the caller).
    init(port: Int, origin: Int, edge: String, cookieDomain: String, directory: URL, serverLines: String = "") throws {
        let shipped = try String(contentsOf: Self.configuration, encoding: .utf8)
        let secretPath = directory.appendingPathComponent("nginx-edge.secret")
        try Data((Self.secret + "\n").utf8).write(to: secretPath)
        profiles = [:]
        for name in Self.profileNames {
            let text = try String(contentsOf: Self.profileDirectory.appendingPathComponent("\(name).profile"), encoding: .utf8)
            let settings = try CDNProfileSettings(text: text, source: "deploy/cdn/\(name).profile")
            let expression = try SecureLinkExpression(parsing: settings.secureLinkMD5 ?? "")
            let line = "secure_link_md5 \"\(expression.nginxValue(secretText: Self.secretPlaceholder))\";"
            guard shipped.contains(line) else {
                throw RawHTTP.Failure(
                    description: "deploy/cdn/\(name).profile signs `\(expression)`, but deploy/nginx/tokengate-edge.conf has no `\(line)`"
                )
            }
            let profile = try Self.substitute(
                text,
                in: "deploy/cdn/\(name).profile",
                [
                    ("key = nginx-edge.secret", "key = \(secretPath.path)"),
                    (Self.exampleEdge, edge),
                ] + (settings.cookieDomain == nil ? [] : [("cookie-domain = \(Self.exampleDomain)", "cookie-domain = \(cookieDomain)")])
            )
            let path = directory.appendingPathComponent("\(name).profile")
            try Data(profile.utf8).write(to: path)
            profiles[name] = path.path
        }
        var substitutions = [
            ("listen 80;", "listen 127.0.0.1:\(port);"),
            ("server 127.0.0.1:8080;", "server 127.0.0.1:\(origin);"),
            ("/var/cache/nginx/tokengate-edge", "{{prefix}}/cache/edge"),
            ("/var/log/nginx/tokengate-edge.access.log", "{{prefix}}/logs/tokengate-edge.access.log"),
            (Self.secretPlaceholder, Self.secret),
        ]
        if !serverLines.isEmpty {
            substitutions.append(("server_name edge.media.example.com;", "server_name edge.media.example.com;\n" + serverLines))
        }
        http = try Self.substitute(shipped, in: "deploy/nginx/tokengate-edge.conf", substitutions)
    }

    /// Each substitution, which must find its text (the file's shape is part of its contract with the tests).
    static func substitute(_ text: String, in file: String, _ substitutions: [(String, String)]) throws -> String {
        var result = text
        for (old, new) in substitutions {
            guard result.contains(old) else { throw RawHTTP.Failure(description: "\(file) no longer holds `\(old)`, which the tests substitute") }
            result = result.replacingOccurrences(of: old, with: new)
        }
        return result
    }

    /// A media origin for the edge: nginx itself serving `www/`, logging each
    /// request line with the Cookie header it received (the edge must pass neither token on).
    static func origin(port: Int) -> String {
        """
        log_format edge_origin '"$request" cookie="$http_cookie"';
        server {
            listen 127.0.0.1:\(port);
            root {{prefix}}/www;
            access_log {{prefix}}/logs/origin.log edge_origin;
        }
        """
    }
}
