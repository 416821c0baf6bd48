/// The Base64url of JWS compact serialization (RFC 7515 §2): the URL-safe
/// alphabet, no padding, no white space, and canonical — the unused low bits
/// of the last character are zero, so each byte string has exactly one text.
/// Canonical matters because the signature covers the text, not the bytes: two
/// texts of one header would be two statements that decode alike.
enum JWSBase64URL {
    static func isAlphabet(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
            true
        default: false
        }
    }

    /// The bytes, or nil when `text` is not canonical unpadded Base64url.
    static func decode(_ text: some Collection<UInt8>) -> [UInt8]? {
        guard text.count % 4 != 1, text.allSatisfy(isAlphabet) else { return nil }
        guard let bytes = try? Base64.decode(Array(text), whitespace: .lineBreaks).bytes else { return nil }
        guard encode(bytes).utf8.elementsEqual(text) else { return nil }
        return bytes
    }

    static func encode(_ bytes: some Collection<UInt8>) -> String {
        Base64.encode(bytes, alphabet: .url, padded: false)
    }
}
