/// One CBOR data item (RFC 8949 §3), as read: the Common Access Token's
/// claims, its COSE headers and the COSE structure itself are values of this type.
///
/// A value has two doors: ``init(cbor:limits:)`` reads it from bytes with a
/// cursor (definite lengths only, bounded depth and size, duplicate map keys
/// refused), and ``cbor()`` writes it in preferred serialization
/// (RFC 8949 §4.1). A value does not remember how wide its integers or lengths
/// were written: reading accepts a non-preferred width (RFC 8949 §3 allows it,
/// and node-cat writes `b9 0001` for a one-pair map), so writing a value read
/// from such bytes gives shorter bytes. That is why a MAC or signature is
/// always checked over the bytes as received, never over a re-encoding.
public indirect enum CBORValue: Sendable, Hashable {
    /// An integer of major type 0 or 1 that fits `Int64` (every negative one does:
    /// the reader refuses a major type 1 argument above `Int64.max`).
    case integer(Int64)
    /// An unsigned integer above `Int64.max` (major type 0); smaller ones are ``integer(_:)``.
    case largeUnsigned(UInt64)
    case bytes([UInt8])
    /// A text string, valid UTF-8 (RFC 8949 §3.1, major type 3).
    case text(String)
    case array([CBORValue])
    /// Pairs in the order written; keys are unique.
    case map([CBORMapEntry])
    /// A tag and its content (RFC 8949 §3.4), kept as read: the reader gives
    /// no tag a meaning; the COSE and claim readers decide which they accept.
    case tagged(UInt64, CBORValue)
    case bool(Bool)
    case null
    case undefined
    /// A simple value other than false, true, null and undefined (RFC 8949 §3.3).
    case simple(UInt8)
    /// A float as its IEEE 754 bits and width in bytes (2, 4 or 8), so that
    /// reading and writing it again is exact, NaN payloads included.
    case float(bits: UInt64, byteCount: Int)

    /// The value as `Int64` when it is an integer that fits.
    public var int64: Int64? {
        if case .integer(let value) = self { return value }
        return nil
    }

    public var textValue: String? {
        if case .text(let value) = self { return value }
        return nil
    }

    public var bytesValue: [UInt8]? {
        if case .bytes(let value) = self { return value }
        return nil
    }

    public var mapEntries: [CBORMapEntry]? {
        if case .map(let entries) = self { return entries }
        return nil
    }

    public var arrayItems: [CBORValue]? {
        if case .array(let items) = self { return items }
        return nil
    }

    /// The value of the first pair whose key is `key` (keys are unique in a value read).
    public subscript(key: CBORValue) -> CBORValue? {
        mapEntries?.first { $0.key == key }?.value
    }

    /// The value of the pair keyed by the integer `key`.
    public subscript(label key: Int64) -> CBORValue? { self[.integer(key)] }

    /// The float as a `Double` (half and single precision widened exactly).
    public var doubleValue: Double? {
        guard case .float(let bits, let byteCount) = self else { return nil }
        switch byteCount {
        case 2: return CBORHalfFloat.double(fromBits: UInt16(truncatingIfNeeded: bits))
        case 4: return Double(Float(bitPattern: UInt32(truncatingIfNeeded: bits)))
        default: return Double(bitPattern: bits)
        }
    }
}

/// One key and value of a CBOR map, in the order written.
public struct CBORMapEntry: Sendable, Hashable {
    public let key: CBORValue
    public let value: CBORValue

    public init(_ key: CBORValue, _ value: CBORValue) {
        self.key = key
        self.value = value
    }
}

/// IEEE 754 half precision, which CBOR may use for floats (RFC 8949 §3.3,
/// Appendix D), widened without `Float16` (not on every platform).
enum CBORHalfFloat {
    static func double(fromBits half: UInt16) -> Double {
        let exponent = Int(half >> 10 & 0x1F)
        let mantissa = Double(half & 0x3FF)
        let magnitude: Double
        switch exponent {
        case 0: magnitude = mantissa * 0x1p-24
        case 31: magnitude = mantissa == 0 ? .infinity : .nan
        default: magnitude = (1 + mantissa / 1024) * Double(sign: .plus, exponent: exponent - 15, significand: 1)
        }
        return half & 0x8000 == 0 ? magnitude : -magnitude
    }
}
