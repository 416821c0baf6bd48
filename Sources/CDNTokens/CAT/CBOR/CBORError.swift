/// Why bytes are not a CBOR item this reader accepts, and where: a stable
/// code for tests and a byte offset for people (`CBOR byte 12: …`).
public struct CBORError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Code: String, Sendable, Hashable {
        /// The input ends inside an item.
        case truncated
        /// Longer than ``CBORLimits/maximumInputBytes``.
        case tooLarge
        /// Nested deeper than ``CBORLimits/maximumDepth``.
        case tooDeep
        /// An indefinite length (additional information 31), or a stray break byte.
        case indefiniteLength
        /// Additional information 28–30, reserved (RFC 8949 §3).
        case reservedAdditionalInformation
        /// A negative integer below `Int64.min` (it would wrap).
        case integerOverflow
        /// A map with two equal keys (RFC 8949 §5.6: not valid for our use).
        case duplicateMapKey
        /// A text string that is not valid UTF-8.
        case invalidUTF8
        /// A simple value 0–31 written in two bytes (RFC 8949 §3.3: not well-formed).
        case malformedSimpleValue
        /// Bytes after the single top-level item.
        case trailingBytes
    }

    public let code: Code
    /// The offset of the item's first byte (or of the offending byte).
    public let offset: Int
    public let detail: String

    public init(_ code: Code, at offset: Int, _ detail: String) {
        self.code = code
        self.offset = offset
        self.detail = detail
    }

    public var description: String { "CBOR byte \(offset): \(detail)" }
}
