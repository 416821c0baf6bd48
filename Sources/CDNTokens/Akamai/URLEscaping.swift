import EntitlementTokens

/// The two URL escapings the edge formats need: Akamai's early escaping
/// (Python's `quote_plus` with its escapes lower-cased, what akamai-edgeauth
/// writes), and the percent-decoding both Akamai and nginx apply to a path
/// before comparing it (RFC 3986 §2.1). One home, used by the Akamai and the
/// secure_link code alike.
enum URLEscaping {
    /// `quote_plus(text)` with lower-cased escapes: the UTF-8 bytes, with
    /// letters, digits and `_.-~` kept (Python's always-safe set, RFC 3986 §2.3
    /// unreserved), a space written `+`, every other byte `%xx` in lower case.
    static func quotePlusLowercase(_ text: String) -> String {
        quotePlusLowercase(text.utf8)
    }

    /// The same over bytes (a percent-decoded path need not be UTF-8).
    static func quotePlusLowercase(_ bytes: some Collection<UInt8>) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 3)
        for byte in bytes {
            if byte.isASCIILetterOrDigit || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".")
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "~")
            {
                out.append(byte)
            } else if byte == UInt8(ascii: " ") {
                out.append(UInt8(ascii: "+"))
            } else {
                out.append(UInt8(ascii: "%"))
                out.append(contentsOf: ByteRules.lowercaseHex(CollectionOfOne(byte)).utf8)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// True when every `%` in `bytes` starts a `%XX` escape (two hex digits).
    static func hasWellFormedEscapes(_ bytes: some Collection<UInt8>) -> Bool {
        var remaining = 0
        for byte in bytes {
            if remaining > 0 {
                guard ByteRules.hexValue(byte) != nil else { return false }
                remaining -= 1
            } else if byte == UInt8(ascii: "%") {
                remaining = 2
            }
        }
        return remaining == 0
    }

    /// `bytes` with each `%XX` escape replaced by its byte. A `%` that does not
    /// start an escape stays as written, as nginx and Akamai's edges leave it;
    /// `+` stays `+` (a path, not a form). One pass, linear in the length.
    static func percentDecoded(_ bytes: some Collection<UInt8>) -> [UInt8] {
        let input = Array(bytes)
        var out: [UInt8] = []
        out.reserveCapacity(input.count)
        var index = 0
        while index < input.count {
            if input[index] == UInt8(ascii: "%"), index + 2 < input.count,
                let high = ByteRules.hexValue(input[index + 1]), let low = ByteRules.hexValue(input[index + 2])
            {
                out.append(high << 4 | low)
                index += 3
            } else {
                out.append(input[index])
                index += 1
            }
        }
        return out
    }
}
