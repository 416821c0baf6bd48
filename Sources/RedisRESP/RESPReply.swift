/// One RESP2 reply, as Redis (or Valkey) sends it.
///
/// Simple strings and errors keep their bytes: RESP does not promise UTF-8,
/// and a decoded reply that re-encodes to the same bytes is what the fuzz
/// oracle checks. ``text`` reads them for messages.
public enum RESPReply: Sendable, Hashable {
    /// `+OK\r\n`
    case simpleString([UInt8])
    /// `-ERR message\r\n`: the command failed; the first word is its kind (`OOM`, `READONLY`, `WRONGPASS`…).
    case error([UInt8])
    /// `:42\r\n`
    case integer(Int64)
    /// `$3\r\nabc\r\n`
    case bulkString([UInt8])
    /// `$-1\r\n` or `*-1\r\n`: no value (a `SET … NX` that did not set).
    case null
    /// `*2\r\n…`
    case array([RESPReply])

    /// The bytes of a simple string, error or bulk string as text (invalid UTF-8 repaired), for messages.
    public var text: String? {
        switch self {
        case .simpleString(let bytes), .error(let bytes), .bulkString(let bytes):
            return String(decoding: bytes, as: UTF8.self)
        case .integer(let value):
            return String(value)
        case .null, .array:
            return nil
        }
    }

    /// Whether this is the simple string `OK`.
    public var isOK: Bool {
        if case .simpleString(let bytes) = self { return bytes.elementsEqual("OK".utf8) }
        return false
    }

    /// This reply in RESP2's wire form (`.null` as a null bulk string).
    public func encoded() -> [UInt8] {
        var bytes: [UInt8] = []
        encode(into: &bytes)
        return bytes
    }

    public func encode(into bytes: inout [UInt8]) {
        switch self {
        case .simpleString(let value):
            bytes.append(UInt8(ascii: "+"))
            bytes.append(contentsOf: value)
        case .error(let value):
            bytes.append(UInt8(ascii: "-"))
            bytes.append(contentsOf: value)
        case .integer(let value):
            bytes.append(UInt8(ascii: ":"))
            bytes.append(contentsOf: String(value).utf8)
        case .bulkString(let value):
            bytes.append(UInt8(ascii: "$"))
            bytes.append(contentsOf: String(value.count).utf8)
            bytes.append(contentsOf: RESPSyntax.lineEnd)
            bytes.append(contentsOf: value)
        case .null:
            bytes.append(contentsOf: "$-1".utf8)
        case .array(let elements):
            bytes.append(UInt8(ascii: "*"))
            bytes.append(contentsOf: String(elements.count).utf8)
            bytes.append(contentsOf: RESPSyntax.lineEnd)
            for element in elements { element.encode(into: &bytes) }
            return
        }
        bytes.append(contentsOf: RESPSyntax.lineEnd)
    }
}

enum RESPSyntax {
    static let carriageReturn = UInt8(ascii: "\r")
    static let lineFeed = UInt8(ascii: "\n")
    static let lineEnd: [UInt8] = [carriageReturn, lineFeed]
}
