/// The expression an nginx edge's `secure_link_md5` hashes, as a profile
/// writes it (without nginx's quotes, the secret written `$secret`): literal
/// text and these variables only — `$secure_link_expires`, `$uri`,
/// `$remote_addr`, `$folder` (the scope's folder, which the edge captures
/// with a regex location) and `$secret` — each also in nginx's `${name}` form.
///
/// Parsed once, at configuration: an unknown variable (`$host`, a capture
/// `$1`) is refused by name, because the gate could not know its value on
/// the edge; `$secret` is required (without it anyone can make the hash) and
/// so is `$secure_link_expires` (without it the expiry is not signed and a
/// viewer could extend it). docs/DESIGN.md#the-cdn-exchange.
public struct SecureLinkExpression: Sendable, Hashable, CustomStringConvertible {
    /// The variables an expression may name.
    public enum Variable: String, Sendable, Hashable, CaseIterable {
        case expires = "secure_link_expires"
        case uri
        case remoteAddress = "remote_addr"
        case folder
        case secret
    }

    /// A run of literal text, or a variable.
    public enum Part: Sendable, Hashable {
        case literal(String)
        case variable(Variable)
    }

    /// The longest expression read.
    public static let maximumLength = 1024

    /// The expression as the profile wrote it.
    public let text: String
    public let parts: [Part]

    /// Reads the expression by nginx's rules for a complex value: `$` then a
    /// name of letters, digits and `_`, or `${name}`; literal text between.
    /// Printable ASCII and the space only.
    public init(parsing text: String) throws(CDNRefusal) {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty, bytes.count <= Self.maximumLength else {
            throw .format("a secure_link_md5 expression of \(bytes.count) bytes (1 to \(Self.maximumLength))")
        }
        guard bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else {
            throw .format("a secure_link_md5 expression with a control character or a non-ASCII byte")
        }
        var parts: [Part] = []
        var literal: [UInt8] = []
        var index = 0
        while index < bytes.count {
            guard bytes[index] == UInt8(ascii: "$") else {
                literal.append(bytes[index])
                index += 1
                continue
            }
            index += 1
            let braced = index < bytes.count && bytes[index] == UInt8(ascii: "{")
            if braced { index += 1 }
            let start = index
            while index < bytes.count, Self.isNameByte(bytes[index]) { index += 1 }
            let name = String(decoding: bytes[start..<index], as: UTF8.self)
            if braced {
                guard index < bytes.count, bytes[index] == UInt8(ascii: "}") else {
                    throw .format("the variable '${\(name)' in the secure_link_md5 expression has no closing '}'")
                }
                index += 1
            }
            guard !name.isEmpty else { throw .format("a '$' without a variable name in the secure_link_md5 expression") }
            guard let variable = Variable(rawValue: name) else {
                throw .format(
                    "the secure_link_md5 expression names '$\(name)'; only $secure_link_expires, $uri, $remote_addr, $folder and $secret are known to the gate"
                )
            }
            if !literal.isEmpty { parts.append(.literal(String(decoding: literal, as: UTF8.self))) }
            literal.removeAll()
            parts.append(.variable(variable))
        }
        if !literal.isEmpty { parts.append(.literal(String(decoding: literal, as: UTF8.self))) }
        self.text = text
        self.parts = parts
        guard uses(.secret) else { throw .format("the secure_link_md5 expression does not name $secret: anyone could make its hash") }
        guard uses(.expires) else {
            throw .format("the secure_link_md5 expression does not name $secure_link_expires: the expiry would not be signed")
        }
    }

    public var description: String { text }

    public func uses(_ variable: Variable) -> Bool { parts.contains(.variable(variable)) }

    /// The configuration check, made once when a profile is read: a folder
    /// scope signs `$folder` and not `$uri` (the edge computes `$uri` for each
    /// playlist and segment, so a folder token cannot sign one); a URL scope
    /// signs `$uri`; the viewer's IP is signed (`$remote_addr`) exactly when
    /// the profile binds it.
    public func checkConfiguration(scope: CDNScope, bindsIP: Bool) throws(CDNRefusal) {
        switch scope {
        case .folder:
            guard !uses(.uri) else {
                throw .format("the secure_link_md5 expression names $uri, but a folder-scoped token covers many URLs: sign $folder instead")
            }
            guard uses(.folder) else { throw .format("a folder-scoped secure_link_md5 expression must name $folder, or the token covers every URL") }
        case .url:
            guard uses(.uri) else { throw .format("a URL-scoped secure_link_md5 expression must name $uri, or the token covers more than the URL") }
        }
        if bindsIP, !uses(.remoteAddress) { throw .format("the viewer's IP is bound, but the secure_link_md5 expression does not name $remote_addr") }
        if !bindsIP, uses(.remoteAddress) {
            throw .format("the secure_link_md5 expression names $remote_addr, but the profile does not bind the viewer's IP")
        }
    }

    /// The expression as an nginx `secure_link_md5` directive's value, with
    /// `secretText` in place of `$secret` (for writing an edge's configuration).
    /// nginx has no escape for `$` in a value: a secret written here is
    /// letters and digits (hex, as `openssl rand -hex 32` makes it).
    public func nginxValue(secretText: String) -> String {
        parts.map { part in
            switch part {
            case .literal(let text): text
            case .variable(.secret): secretText
            case .variable(let variable): "${\(variable.rawValue)}"
            }
        }.joined()
    }

    /// The bytes nginx hashes: each variable replaced by its value. A value
    /// the expression names must be given (the callers check first).
    func hashedBytes(_ values: SecureLinkValues) -> [UInt8] {
        var bytes: [UInt8] = []
        for part in parts {
            switch part {
            case .literal(let text): bytes += text.utf8
            case .variable(.expires): bytes += String(values.expires).utf8
            case .variable(.uri): bytes += values.uri ?? []
            case .variable(.remoteAddress): bytes += (values.remoteAddress ?? "").utf8
            case .variable(.folder): bytes += values.folder ?? []
            case .variable(.secret): bytes += values.secret
            }
        }
        return bytes
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        byte.isASCIILetterOrDigit || byte == UInt8(ascii: "_")
    }
}

/// What an edge substitutes for an expression's variables.
struct SecureLinkValues {
    var expires: Int64
    /// nginx's `$uri`: the path, percent-decoded.
    var uri: [UInt8]?
    var remoteAddress: String?
    /// The folder path, ending in `/`, percent-decoded.
    var folder: [UInt8]?
    var secret: [UInt8]
}
