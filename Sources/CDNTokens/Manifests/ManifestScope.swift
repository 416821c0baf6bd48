/// Where a manifest's tokens may go: the profile's resource URL cut to its
/// origin and folder (§14's folder scope). A URI resolved inside it gets a
/// token; anything else is left as it resolved, so a token never leaves for a
/// place it was not made for (docs/DESIGN.md#tokens-inside-manifests).
public struct ManifestScope: Sendable, Hashable {
    /// `http` or `https`.
    public let scheme: String
    /// Lower-cased.
    public let host: String
    /// The port as written in the resource URL, else nil (the scheme's own).
    public let port: Int?
    /// The folder every tokenized URI lies in, ending in `/`, in the one
    /// reading of a path (``CDNURL/folderPath``).
    public let folder: String
    /// The query names the CDN token is written under (`md5`, `expires`;
    /// `__token__`; …). A media URI inside the scope whose query already holds
    /// one of them would reach the edge with two readings, so the manifest is
    /// unreadable; empty: not checked.
    public let tokenNames: Set<String>

    /// The query name that carries the playback session on a URI routed back through the gate.
    public static let sessionName = "tgs"

    public init(resourceURL: CDNURL, tokenNames: [String] = []) {
        scheme = resourceURL.scheme
        host = resourceURL.host
        port = resourceURL.port
        folder = resourceURL.folderPath
        self.tokenNames = Set(tokenNames)
    }

    /// `scheme://host[:port]`: what a tokenized media URI is written on.
    public var origin: String { "\(scheme)://\(host)" + (port.map { ":\($0)" } ?? "") }

    /// Where a resolved URI lies with respect to the scope, and so whether it gets a token.
    public func classify(_ uri: ManifestURI) -> ManifestClassification {
        guard let scheme = uri.scheme, scheme == "http" || scheme == "https" else { return .otherScheme }
        guard scheme == self.scheme, let authority = uri.authority, let (host, port) = Self.hostAndPort(authority),
            host == self.host, Self.effectivePort(port, scheme) == Self.effectivePort(self.port, scheme)
        else {
            return .foreignHost
        }
        guard let path = try? RequestPath.read((uri.path.isEmpty ? "/" : uri.path).utf8) else { return .refusedPath }
        return path.hasPrefix(folder) ? .inside : .otherFolder
    }

    /// The host (lower-cased) and port of an authority; nil for user
    /// information (`user@`), an empty host or a port that is not a number:
    /// none of them is the scope's host.
    static func hostAndPort(_ authority: String) -> (String, Int?)? {
        let bytes = Array(authority.utf8)
        guard !bytes.contains(UInt8(ascii: "@")) else { return nil }
        var hostEnd = bytes.endIndex
        var portText: ArraySlice<UInt8>? = nil
        if bytes.first == UInt8(ascii: "[") {
            guard let close = bytes.firstIndex(of: UInt8(ascii: "]")) else { return nil }
            hostEnd = close + 1
            if hostEnd < bytes.endIndex {
                guard bytes[hostEnd] == UInt8(ascii: ":") else { return nil }
                portText = bytes[(hostEnd + 1)...]
            }
        } else if let colon = bytes.firstIndex(of: UInt8(ascii: ":")) {
            hostEnd = colon
            portText = bytes[(colon + 1)...]
        }
        guard hostEnd > 0 else { return nil }
        var port: Int? = nil
        // RFC 3986 §6.2.3: an empty port is the scheme's own.
        if let portText, !portText.isEmpty {
            guard portText.count <= 5, portText.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let value = Int(String(decoding: portText, as: UTF8.self)),
                (1...65535).contains(value)
            else { return nil }
            port = value
        }
        return (String(decoding: bytes[..<hostEnd], as: UTF8.self).lowercased(), port)
    }

    /// RFC 3986 §6.2.3: `:443` on `https` is the same origin as none.
    private static func effectivePort(_ port: Int?, _ scheme: String) -> Int {
        port ?? (scheme == "https" ? 443 : 80)
    }
}

/// Where a resolved URI lies: inside the scope (it gets a token or goes back
/// through the gate), or left alone as it resolved, for a reason that is counted.
public enum ManifestClassification: Sendable, Hashable, CaseIterable {
    /// `http`/`https` on the scope's scheme, host and port, in its folder.
    case inside
    /// Any scheme but `http` and `https` (`skd://`, `data:`).
    case otherScheme
    /// Another scheme, host or port (an ad server, a third-party key server).
    case foreignHost
    /// The scope's origin, another folder.
    case otherFolder
    /// A path the one reading refuses (an encoded `/`, `%2e%2e`, a NUL): never matched.
    case refusedPath
}
