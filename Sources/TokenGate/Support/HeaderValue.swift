/// Makes any text safe as an HTTP header value.
///
/// Token fields are hostile input: a resource id can hold CR LF, NUL, bytes
/// a proxy reads as Latin-1, or bidi controls. A value the gate sends is
/// visible ASCII only (0x21–0x7E); every other byte of the UTF-8 — space and
/// `%` included, so that decoding is unambiguous — is written `%XX`
/// (RFC 3986 style, upper-case hex). A consumer that wants the original text
/// percent-decodes it as UTF-8.
///
/// Values are also bounded: a Media RSS resource can be 32 KiB, and nginx
/// refuses an auth answer whose headers overflow its buffer (a 500 on every
/// request). A value longer than ``maximumBytes`` once encoded is cut at a
/// character boundary and ends with `%E2%80%A6` (an encoded "…").
enum HeaderValue {
    /// Encoded bytes kept per value: well within nginx's default 4 KiB
    /// `proxy_buffer_size` for all the `X-Token-*` headers together.
    static let maximumBytes = 512
    /// `X-Token-Reason` is for a log line (docs/DESIGN.md#endpoints-and-answers): shorter.
    static let maximumReasonBytes = 256
    static let ellipsis = "%E2%80%A6"

    static func encode(_ text: String, maximumBytes: Int = HeaderValue.maximumBytes) -> String {
        // The common case (an id like `TNT`) is already safe: the text itself, no copy.
        if isPlain(text.utf8.span, maximumBytes: maximumBytes) { return text }
        return escaped(text.utf8.span, maximumBytes: maximumBytes)
    }

    static func encode(_ bytes: [UInt8], maximumBytes: Int = HeaderValue.maximumBytes) -> String {
        if isPlain(bytes.span, maximumBytes: maximumBytes) { return String(decoding: bytes, as: UTF8.self) }
        return escaped(bytes.span, maximumBytes: maximumBytes)
    }

    private static func isPlain(_ bytes: Span<UInt8>, maximumBytes: Int) -> Bool {
        guard bytes.count <= maximumBytes else { return false }
        for index in bytes.indices where !isPlain(bytes[index]) { return false }
        return true
    }

    /// Over a span with integer indices: the generic version this replaced
    /// walked a `String.UTF8View` character by character through
    /// `index(_:offsetBy:limitedBy:)`, and every answer's reason (spaces
    /// included) takes this path (docs/PERFORMANCE.md, "Where the gate's CPU goes").
    /// The cut is found first, then the output is written once at its length:
    /// a Media RSS resource in `X-Token-Resource` is hundreds of bytes to escape
    /// on every allow, and appending them one by one cost more than the rest.
    private static func escaped(_ bytes: Span<UInt8>, maximumBytes: Int) -> String {
        var encodedLength = 0
        for index in bytes.indices { encodedLength &+= isPlain(bytes[index]) ? 1 : 3 }
        var end = bytes.count
        var length = encodedLength
        let cut = encodedLength > maximumBytes
        if cut {
            // Whole characters only: a cut never splits a UTF-8 sequence.
            let budget = maximumBytes - ellipsis.utf8.count
            var index = 0
            length = 0
            while index < bytes.count {
                let lead = bytes[index]
                let characterEnd = min(index + (lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1), bytes.count)
                var cost = 0
                for byte in index..<characterEnd { cost &+= isPlain(bytes[byte]) ? 1 : 3 }
                guard length + cost <= budget else { break }
                length &+= cost
                index = characterEnd
            }
            end = index
        }
        var output = [UInt8](repeating: UInt8(ascii: "%"), count: length)
        var position = 0
        for index in 0..<end {
            let byte = bytes[index]
            if isPlain(byte) {
                output[position] = byte
                position &+= 1
            } else {
                output[position &+ 1] = hexDigit(byte >> 4)
                output[position &+ 2] = hexDigit(byte & 0x0F)
                position &+= 3
            }
        }
        if cut { output += ellipsis.utf8 }
        return String(decoding: output, as: UTF8.self)
    }

    @inline(__always)
    static func isPlain(_ byte: UInt8) -> Bool {
        byte > 0x20 && byte < 0x7F && byte != UInt8(ascii: "%")
    }

    /// Upper-case hex of a nibble.
    @inline(__always)
    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") &+ nibble : UInt8(ascii: "A") &- 10 &+ nibble
    }
}
