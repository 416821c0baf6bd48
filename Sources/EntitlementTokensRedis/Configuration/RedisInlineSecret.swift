/// A secret written inside a Redis URL rather than read from a file.
///
/// The library accepts both; a service whose URL sits in its command line
/// (visible to every user in `ps`) or in a settings file others can read
/// refuses these and names the file parameter that replaces each
/// (docs/DESIGN.md#secrets).
package enum RedisInlineSecret: String, Sendable, CaseIterable {
    /// The data nodes' password in the authority (`redis://user:secret@…`).
    case password
    /// The sentinels' password as `sentinel-password=`.
    case sentinelPassword

    /// The URL parameter that reads the same secret from a file.
    package var fileParameter: String {
        switch self {
        case .password: "password-file="
        case .sentinelPassword: "sentinel-password-file="
        }
    }

    /// How a message names it, never its value.
    package var placeDescription: String {
        switch self {
        case .password: "a password in the URL"
        case .sentinelPassword: "sentinel-password="
        }
    }

    /// The secrets `url` holds inline. Empty when it holds none, and when it
    /// does not parse: opening it then fails with its own message, which
    /// hides every password.
    package static func found(in url: String) -> [RedisInlineSecret] {
        guard let parsed = try? RedisURL.parse(url) else { return [] }
        var found: [RedisInlineSecret] = []
        if parsed.endpoint.password != nil { found.append(.password) }
        if case .sentinel(let settings) = parsed.topology, settings.password != nil { found.append(.sentinelPassword) }
        return found
    }
}
