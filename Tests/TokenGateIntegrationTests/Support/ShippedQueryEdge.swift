import CDNTokens
import Foundation

@testable import GateTestSupport

/// The shipped query-token edge (`deploy/nginx/tokengate-edge-query.conf`)
/// and its manifest profile (`deploy/cdn/nginx-edge-manifest.profile`) as
/// the tests run them: ports, paths, the origin and the secret substituted,
/// nothing else. As for ``ShippedEdge``, the profile's `secure-link-md5` must
/// be exactly the edge's `secure_link_md5` line, or the setup fails naming both.
struct ShippedQueryEdge {
    var http: String
    /// The profile file written.
    var profile: String

    static let configuration = GateFixtures.repository.appendingPathComponent("deploy/nginx/tokengate-edge-query.conf")
    static let profileFile = GateFixtures.repository.appendingPathComponent("deploy/cdn/nginx-edge-manifest.profile")

    /// `edge`: the edge's URL origin the profile's resources name; `origin`: the media origin's port
    /// (the edge's upstream and the profile's `manifest-origin`); `extra`: profile lines appended
    /// (resources, a shorter lifetime); `replacing`: profile lines changed.
    init(port: Int, origin: Int, edge: String, directory: URL, extra: [String] = [], replacing: [(String, String)] = []) throws {
        let shipped = try String(contentsOf: Self.configuration, encoding: .utf8)
        let secretPath = directory.appendingPathComponent("nginx-edge.secret")
        try Data((ShippedEdge.secret + "\n").utf8).write(to: secretPath)
        let text = try String(contentsOf: Self.profileFile, encoding: .utf8)
        let settings = try CDNProfileSettings(text: text, source: "deploy/cdn/nginx-edge-manifest.profile")
        let expression = try SecureLinkExpression(parsing: settings.secureLinkMD5 ?? "")
        let line = "secure_link_md5 \"\(expression.nginxValue(secretText: ShippedEdge.secretPlaceholder))\";"
        guard shipped.contains(line) else {
            throw RawHTTP.Failure(
                description:
                    "deploy/cdn/nginx-edge-manifest.profile signs `\(expression)`, but deploy/nginx/tokengate-edge-query.conf has no `\(line)`"
            )
        }
        var profileText = try ShippedEdge.substitute(
            text,
            in: "deploy/cdn/nginx-edge-manifest.profile",
            [
                ("key = nginx-edge.secret", "key = \(secretPath.path)"),
                (ShippedEdge.exampleEdge, edge),
                ("manifest-origin = http://127.0.0.1:8080", "manifest-origin = http://127.0.0.1:\(origin)"),
            ] + replacing
        )
        profileText += extra.map { $0 + "\n" }.joined()
        let path = directory.appendingPathComponent("nginx-edge-manifest.profile")
        try Data(profileText.utf8).write(to: path)
        profile = path.path
        http = try ShippedEdge.substitute(
            shipped,
            in: "deploy/nginx/tokengate-edge-query.conf",
            [
                ("listen 80;", "listen 127.0.0.1:\(port);"),
                ("server 127.0.0.1:8080;", "server 127.0.0.1:\(origin);"),
                ("/var/cache/nginx/tokengate-edge-query", "{{prefix}}/cache/edge-query"),
                ("/var/log/nginx/tokengate-edge-query.access.log", "{{prefix}}/logs/tokengate-edge-query.access.log"),
                (ShippedEdge.secretPlaceholder, ShippedEdge.secret),
            ]
        )
    }
}
