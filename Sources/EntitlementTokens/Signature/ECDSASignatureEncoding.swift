/// Converts the raw `r‖s` form of a P-256 ECDSA signature to DER.
///
/// OpenSSL verifies only the DER `ECDSA-Sig-Value` (`SEQUENCE { INTEGER r,
/// INTEGER s }`), and it checks that encoding strictly. Signers outside the
/// OpenSSL/Java world (JOSE, WebCrypto, HSMs) emit the fixed-width 64-byte
/// concatenation instead, so docs/DESIGN.md#signatures-and-keys accepts both; the raw form is re-encoded
/// here, without allocation, and then verified the same way as DER.
enum ECDSASignatureEncoding {
    /// Width of one scalar for P-256.
    static let scalarByteCount = 32
    /// Length of a raw `r‖s` signature for P-256.
    static let rawByteCount = 2 * scalarByteCount
    /// Longest DER form for P-256: 2 + 2 × (2 + 1 + 32).
    static let maximumDERByteCount = 72
    /// Shortest DER form: two one-byte INTEGERs.
    static let minimumDERByteCount = 8

    /// Writes the DER form of the 64-byte raw signature `raw` into `output`
    /// (at least ``maximumDERByteCount`` bytes) and returns its length.
    static func derFromRaw(_ raw: Span<UInt8>, into output: inout MutableSpan<UInt8>) -> Int {
        precondition(raw.count == rawByteCount && output.count >= maximumDERByteCount)
        var position = 2
        position = writeInteger(raw.extracting(0..<scalarByteCount), into: &output, at: position)
        position = writeInteger(raw.extracting(scalarByteCount..<rawByteCount), into: &output, at: position)
        output[0] = 0x30
        output[1] = UInt8(position - 2)  // at most 70: short-form length
        return position
    }

    /// Writes `magnitude` (big-endian, unsigned) as a minimal DER INTEGER.
    private static func writeInteger(_ magnitude: Span<UInt8>, into output: inout MutableSpan<UInt8>, at start: Int) -> Int {
        var first = 0
        while first < magnitude.count - 1 && magnitude[first] == 0 { first += 1 }
        let needsPad = magnitude[first] & 0x80 != 0
        let length = magnitude.count - first + (needsPad ? 1 : 0)
        var position = start
        output[position] = 0x02
        output[position + 1] = UInt8(length)
        position += 2
        if needsPad {
            output[position] = 0
            position += 1
        }
        for index in first..<magnitude.count {
            output[position] = magnitude[index]
            position += 1
        }
        return position
    }

    // MARK: Any curve (JWS: ES256, ES384)

    /// The DER form of a raw `r‖s` signature of any even length up to 2 × 66
    /// bytes (P-521's width), or nil when the length cannot be raw.
    /// JWS signatures are always raw (RFC 7518 §3.4); OpenSSL verifies only DER.
    static func der(fromRaw raw: [UInt8]) -> [UInt8]? {
        guard !raw.isEmpty, raw.count % 2 == 0, raw.count <= 132 else { return nil }
        let width = raw.count / 2
        var body: [UInt8] = []
        for scalar in [raw[0..<width], raw[width...]] {
            var magnitude = scalar.drop { $0 == 0 }
            if magnitude.isEmpty { magnitude = [0][...] }
            let needsPad = magnitude.first! & 0x80 != 0
            body.append(0x02)
            appendLength(magnitude.count + (needsPad ? 1 : 0), to: &body)
            if needsPad { body.append(0) }
            body.append(contentsOf: magnitude)
        }
        var der: [UInt8] = [0x30]
        appendLength(body.count, to: &der)
        return der + body
    }

    /// The raw `r‖s` form, each scalar `width` bytes, of a DER `ECDSA-Sig-Value`
    /// (what OpenSSL signs), or nil when `der` is not one or a scalar is wider.
    static func raw(fromDER der: [UInt8], width: Int) -> [UInt8]? {
        var index = 0
        func length() -> Int? {
            guard index < der.count else { return nil }
            let first = der[index]
            index += 1
            if first < 0x80 { return Int(first) }
            guard first == 0x81, index < der.count else { return nil }
            index += 1
            return Int(der[index - 1])
        }
        guard der.first == 0x30 else { return nil }
        index = 1
        guard let total = length(), index + total == der.count else { return nil }
        var output: [UInt8] = []
        for _ in 0..<2 {
            guard index < der.count, der[index] == 0x02 else { return nil }
            index += 1
            guard let count = length(), count > 0, index + count <= der.count else { return nil }
            let magnitude = der[index..<index + count].drop { $0 == 0 }
            index += count
            guard magnitude.count <= width else { return nil }
            output += [UInt8](repeating: 0, count: width - magnitude.count) + magnitude
        }
        return index == der.count ? output : nil
    }

    private static func appendLength(_ length: Int, to output: inout [UInt8]) {
        if length < 0x80 {
            output.append(UInt8(length))
        } else {
            output.append(0x81)
            output.append(UInt8(length))
        }
    }
}
