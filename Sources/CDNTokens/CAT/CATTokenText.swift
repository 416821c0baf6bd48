import EntitlementTokens

/// How a Common Access Token was written as text: base64url without padding
/// (what an issuer hands out), standard Base64 (what some tools print), or
/// hex (what people paste from a CBOR tool).
public enum CATTextEncoding: String, Sendable, Hashable {
    case base64url, base64, hex

    /// The longest text read: hex of the 8 KiB a CAT may be, plus white space.
    public static let maximumTextLength = 2 * CBORLimits.commonAccessToken.maximumInputBytes + 64

    /// The bytes `text` stands for, and how it was written. White space at
    /// either end is ignored. Hex is recognised only when every character is
    /// a hex digit and the first byte starts a COSE message (0x84 an array of
    /// four, 0xd1/0xd2 tags 17/18, 0xd8 a one-byte tag such as 61), which no
    /// Base64 text of such a message can be.
    public static func decode(_ text: String) throws(CDNRefusal) -> (bytes: [UInt8], encoding: CATTextEncoding) {
        let characters = Array(Array(text.utf8).trimmingASCIIWhitespace())
        guard !characters.isEmpty else { throw .format("an empty CAT") }
        guard characters.count <= maximumTextLength else {
            throw .format("a CAT of \(characters.count) characters; at most \(maximumTextLength) are read")
        }
        if let bytes = CDNHex.bytes(characters[...]), let first = bytes.first, [0x84, 0xD1, 0xD2, 0xD8].contains(first) {
            return (bytes, .hex)
        }
        let decoded: [UInt8]
        do { decoded = try Base64.decode(characters, whitespace: .lineBreaks).bytes } catch {
            throw .format("a CAT is base64url, Base64 or hex; this text is none of them (character \(error.offset))")
        }
        let standard = characters.contains { $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "=") }
        return (decoded, standard ? .base64 : .base64url)
    }

    /// `bytes` as base64url without padding, as an issuer writes a CAT.
    static func base64url(_ bytes: [UInt8]) -> String { Base64URL.encode(bytes.span) }
}
