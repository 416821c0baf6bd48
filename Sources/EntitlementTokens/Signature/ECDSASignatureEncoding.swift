/// Converts the raw `r‖s` form of a P-256 ECDSA signature to DER.
///
/// OpenSSL verifies only the DER `ECDSA-Sig-Value` (`SEQUENCE { INTEGER r,
/// INTEGER s }`), and it checks that encoding strictly. Signers outside the
/// OpenSSL/Java world (JOSE, WebCrypto, HSMs) emit the fixed-width 64-byte
/// concatenation instead, so SPEC §3 accepts both; the raw form is re-encoded
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
}
