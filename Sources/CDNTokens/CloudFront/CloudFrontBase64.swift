import EntitlementTokens

/// CloudFront's Base64: standard Base64 (RFC 4648 §4) with padding, then
/// `+` → `-`, `=` → `_`, `/` → `~`, so the value needs no percent-escaping in a
/// query or a cookie. It is neither RFC 4648's base64url (§5 keeps `=` and uses
/// `_` for `/`) nor unpadded; botocore's `_url_b64encode` writes exactly this.
///
/// Read strictly: only CloudFront's own characters, the padding where it must
/// be, and no unused bits set — so one value has one spelling, and what a
/// reader decodes re-encodes to the bytes it was given.
package enum CloudFrontBase64 {
    /// The longest value read, in characters: a policy of
    /// ``CloudFrontPolicy/maximumBytes`` bytes, encoded.
    package static let maximumLength = (CloudFrontPolicy.maximumBytes + 2) / 3 * 4

    package static func encode(_ bytes: [UInt8]) -> String {
        let standard = Base64.encode(bytes, alphabet: .standard, padded: true)
        return String(
            decoding: standard.utf8.map { byte -> UInt8 in
                switch byte {
                case UInt8(ascii: "+"): UInt8(ascii: "-")
                case UInt8(ascii: "="): UInt8(ascii: "_")
                case UInt8(ascii: "/"): UInt8(ascii: "~")
                default: byte
                }
            },
            as: UTF8.self
        )
    }

    /// The bytes `text` encodes, or a refusal naming `field` and what is wrong.
    package static func decode(_ text: String, field: String) throws(CDNRefusal) -> [UInt8] {
        let input = Array(text.utf8)
        guard !input.isEmpty else { throw .format("'\(field)' is empty") }
        guard input.count <= maximumLength else {
            throw .format("'\(field)' has \(input.count) characters, over the limit of \(maximumLength)")
        }
        guard input.count % 4 == 0 else {
            throw .format("'\(field)' is not CloudFront Base64: \(input.count) characters, not a multiple of 4")
        }
        var standard = [UInt8]()
        standard.reserveCapacity(input.count)
        for (offset, byte) in input.enumerated() {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                standard.append(byte)
            case UInt8(ascii: "-"): standard.append(UInt8(ascii: "+"))
            case UInt8(ascii: "~"): standard.append(UInt8(ascii: "/"))
            case UInt8(ascii: "_"):
                // Padding: one or two, only at the very end.
                guard offset >= input.count - 2, input[offset...].allSatisfy({ $0 == UInt8(ascii: "_") }) else {
                    throw .format("'\(field)' is not CloudFront Base64: padding '_' at offset \(offset) before the end")
                }
                standard.append(UInt8(ascii: "="))
            default:
                // `+`, `/` and `=` are standard Base64 but not CloudFront's: a value
                // holding them was altered on the way (a `+` read as a space, say).
                throw .format("'\(field)' is not CloudFront Base64: the character at offset \(offset) is outside A–Z a–z 0–9 - ~ _")
            }
        }
        let bytes: [UInt8]
        do {
            bytes = try Base64.decode(standard, whitespace: .lineBreaks).bytes
        } catch {
            throw .format("'\(field)' is not CloudFront Base64 (offset \(error.offset))")
        }
        // Unused low bits must be zero: otherwise two spellings decode alike.
        guard encode(bytes).utf8.elementsEqual(input) else {
            throw .format("'\(field)' is not canonical CloudFront Base64 (unused bits set)")
        }
        return bytes
    }
}
