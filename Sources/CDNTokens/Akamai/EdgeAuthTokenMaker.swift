/// Makes EdgeAuth tokens with every option akamai-edgeauth 0.3.2 has, and the
/// same bytes for the same inputs: the proof that this package writes the
/// format as its owner's tool does (the known-answer tests drive it).
///
/// `package`, not public: it also makes SHA-1 and MD5 tokens, which nothing
/// should issue; what tokengate issues is ``EdgeAuthIssuer``'s one form.
/// Unlike the tool, it refuses a value that would break the token rather than
/// write it: a `~` in any value, a `!` outside the ACLs, a space or a byte
/// that is not printable ASCII in a written value (escape early, or do not
/// send it), an ACL that is not a path.
package struct EdgeAuthTokenMaker: Sendable {
    /// What the token covers: ACLs (written, joined by `!`), or one URL
    /// (signed as `url=…`, not written).
    package enum Target: Sendable, Hashable {
        case acl([String])
        case url(String)
    }

    package var key: EdgeAuthKey
    package var algorithm: EdgeAuthAlgorithm = .sha256
    /// Appended to the HMAC input as `salt=…`, never written.
    package var salt: String? = nil
    package var ip: String? = nil
    /// `id`.
    package var sessionID: String? = nil
    /// `data` (the tool's `payload`).
    package var data: String? = nil
    /// `st`; nil writes none.
    package var startTime: Int64? = nil
    /// `exp`; when nil, `startTime` (or `now` without one) plus `windowSeconds`.
    package var endTime: Int64? = nil
    package var windowSeconds: Int64? = nil
    /// Escape `ip`, `id`, `data` and the URL with `quote_plus`, lower-cased.
    package var escapeEarly = false

    package init(key: EdgeAuthKey) {
        self.key = key
    }

    /// The token for `target`; `now` stands for the tool's clock when only a
    /// window is given.
    package func make(_ target: Target, now: Int64) throws(CDNRefusal) -> EdgeAuthToken {
        if let startTime, startTime <= 0 { throw .format("an EdgeAuth start time must be greater than 0") }
        if let endTime, endTime <= 0 { throw .format("an EdgeAuth end time must be greater than 0") }
        if let windowSeconds, windowSeconds <= 0 { throw .format("an EdgeAuth window must be greater than 0 seconds") }
        let expires: Int64
        if let endTime {
            expires = endTime
        } else if let windowSeconds {
            let (sum, overflow) = (startTime ?? now).addingReportingOverflow(windowSeconds)
            guard !overflow else { throw .format("an EdgeAuth end time beyond 64 bits") }
            expires = sum
        } else {
            throw .format("an EdgeAuth token needs an end time or a window")
        }
        if let startTime, expires <= startTime {
            throw .format("an EdgeAuth token that would already have expired (exp \(expires) ≤ st \(startTime))")
        }

        let acl: [EdgeAuthACL]?
        var signedURL: String? = nil
        switch target {
        case .acl(let patterns):
            guard !patterns.isEmpty else { throw .format("an ACL-form EdgeAuth token needs at least one ACL") }
            var parsed: [EdgeAuthACL] = []
            for pattern in patterns {
                try Self.checkWritable(pattern, field: "acl")
                guard !pattern.utf8.contains(UInt8(ascii: "!")) else { throw .format("the ACL '\(pattern)' holds '!', which separates ACLs") }
                parsed.append(try EdgeAuthACL(pattern))
            }
            acl = parsed
        case .url(let url):
            guard !url.isEmpty, url.utf8.count <= EdgeAuthToken.maximumLength else {
                throw .format("a URL-form EdgeAuth token needs a URL of 1 to \(EdgeAuthToken.maximumLength) bytes")
            }
            let escaped = escape(url)
            guard !escaped.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) else { throw .format("a URL with a control character") }
            acl = nil
            signedURL = escaped
        }
        let written = try [("ip", ip), ("id", sessionID), ("data", data)].map { (field) throws(CDNRefusal) -> String? in
            guard let value = field.1, !value.isEmpty else { return nil }  // the tool writes no empty field
            let escaped = escape(value)
            try Self.checkWritable(escaped, field: field.0)
            guard !escaped.utf8.contains(UInt8(ascii: "!")) else {
                throw .format("the EdgeAuth field '\(field.0)' would hold '!', which only separates ACLs")
            }
            return escaped
        }
        // The fields, first without the MAC (what it covers), then with it.
        func fields(hmac: [UInt8]) -> EdgeAuthToken {
            EdgeAuthToken(ip: written[0], startTime: startTime, expires: expires, acl: acl, sessionID: written[1], data: written[2], hmac: hmac)
        }
        let fieldBytes = fields(hmac: []).signedFieldBytes()
        let mac = try key.hmac(EdgeAuthToken.signedBytes(fieldBytes: fieldBytes, urlBytes: signedURL.map { Array($0.utf8) }, salt: salt), algorithm)
        // Every value was checked above by the reader's own rules (the
        // writable bytes, `!` only between ACLs, the ACL's reading, the
        // times), so the reader's one rule left is the length; the tests read
        // back what the maker makes (EdgeAuthRoundTripTests).
        let length = fieldBytes.count + Self.macFieldPrefix.count + 2 * mac.count
        guard length <= EdgeAuthToken.maximumLength else {
            throw .format("the EdgeAuth token made would be \(length) bytes, longer than the \(EdgeAuthToken.maximumLength) a reader reads")
        }
        return fields(hmac: mac)
    }

    private static let macFieldPrefix = Array("~hmac=".utf8)

    private func escape(_ value: String) -> String {
        escapeEarly ? URLEscaping.quotePlusLowercase(value) : value
    }

    /// A written value must travel unescaped in a cookie or a query: printable
    /// ASCII, no space, no `~` (the field delimiter), no `;`, `,`, `"`, `\`
    /// (RFC 6265 §4.1.1's cookie-octet), no `&` or `#` (a query's own). A `+`
    /// stays: early escaping writes a space as `+`, and the edge reads it so.
    static func checkWritable(_ value: String, field: String) throws(CDNRefusal) {
        guard !value.isEmpty else { throw .format("the EdgeAuth field '\(field)' would be empty") }
        for byte in value.utf8 {
            guard byte > 0x20, byte < 0x7F else {
                throw .format(
                    "the EdgeAuth field '\(field)' would hold a space, a control character or a non-ASCII byte; it would have to be escaped"
                )
            }
            guard !Self.unwritable.contains(byte) else {
                throw .format("the EdgeAuth field '\(field)' would hold '\(Character(Unicode.Scalar(byte)))', which would have to be escaped")
            }
        }
    }

    static let unwritable: [UInt8] = Array("~;,\"\\&#".utf8)
}
