/// Base64url without padding (RFC 4648 §5), strict and canonical: the text of
/// JWS compact serialization (RFC 7515 §2) and of the gate's session
/// credential. The URL-safe alphabet, no padding, no white space, and the
/// unused low bits of the last character zero, so each byte string has exactly
/// one text. Canonical matters because a signature or a MAC covers the text, not
/// the bytes: a decoder that accepted anything else (padding, the standard
/// alphabet, non-zero low bits) would give one statement or credential many
/// spellings.
///
/// Decoding has one body, over a `Span`: the gate decodes a session credential
/// on every segment request, and from another module a generic decode runs
/// unspecialized, walking the text through protocol witnesses.
package enum Base64URL {
    package static func isAlphabet(_ byte: UInt8) -> Bool {
        values[Int(byte)] != 0xFF
    }

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, byte) in alphabet.enumerated() { table[Int(byte)] = UInt8(index) }
        return table
    }()

    package static func encode(_ bytes: some Collection<UInt8>) -> String {
        let bytes = Array(bytes)
        return encode(bytes.span)
    }

    /// The same over a span of the bytes.
    package static func encode(_ bytes: Span<UInt8>) -> String {
        Base64.encode(bytes, alphabet: .url, padded: false)
    }

    /// nil for anything but canonical unpadded Base64url.
    package static func decode(_ text: some Collection<UInt8>) -> [UInt8]? {
        let bytes = Array(text)
        return decode(bytes.span)
    }

    /// The same over a span of the text's bytes.
    package static func decode(_ text: Span<UInt8>) -> [UInt8]? {
        guard text.count % 4 != 1 else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(text.count * 3 / 4)
        var buffer: UInt32 = 0
        var bits = 0
        for index in text.indices {
            let value = values[Int(text[index])]
            guard value != 0xFF else { return nil }
            buffer = buffer << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: buffer >> UInt32(bits)))
            }
        }
        // Leftover bits must be zero, or two texts would decode alike.
        guard buffer & ((1 << UInt32(bits)) - 1) == 0 else { return nil }
        return output
    }
}
