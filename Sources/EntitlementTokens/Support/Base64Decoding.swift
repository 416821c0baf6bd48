/// Base64 decoding's hot kernel (see ``Base64``): callers hand over a
/// `Span<UInt8>`; the loop reads eight input bytes per load and writes
/// straight into the new array's storage, so its pointers stay here
/// (docs/DESIGN.md#unsafe-code-faces-c). docs/PERFORMANCE.md, "Internal architecture (issue 12)",
/// has what it buys end to end.
extension Base64 {
    /// For the fast path of ``decode(_:whitespace:spacesArePlus:)``: the value
    /// (0...63) of each alphabet character, with 0x40 added for `+ /` and 0x80
    /// for `- _`; 0xC0 for everything else (padding, white space, garbage).
    private static let fast: [UInt8] = {
        var fast = [UInt8](repeating: 0xC0, count: 256)
        for (value, char) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8.enumerated() {
            fast[Int(char)] = UInt8(value)
        }
        fast[Int(UInt8(ascii: "+"))] = 0x40 | 62
        fast[Int(UInt8(ascii: "/"))] = 0x40 | 63
        fast[Int(UInt8(ascii: "-"))] = 0x80 | 62
        fast[Int(UInt8(ascii: "_"))] = 0x80 | 63
        return fast
    }()

    /// The fast table for two characters at once, indexed by the pair as a
    /// little-endian `UInt16` (first character in the low byte): bits 0–11
    /// are their 12 bits of data, bit 12 is set when one is `+` or `/`, bit 13
    /// when one is `-` or `_`, bit 15 when either is not an alphabet character.
    /// 128 KiB, made once; only the 4,096 entries of alphabet pairs are hot.
    private static let pairs: [UInt16] = {
        var pairs = [UInt16](repeating: 0x8000, count: 1 << 16)
        for first in 0..<256 {
            let a = fast[first]
            guard a & 0xC0 != 0xC0 else { continue }
            for second in 0..<256 {
                let b = fast[second]
                guard b & 0xC0 != 0xC0 else { continue }
                let flags = UInt16((a | b) & 0xC0) << 6  // 0x40 -> 0x1000, 0x80 -> 0x2000
                pairs[first | second << 8] = UInt16(a & 0x3F) << 6 | UInt16(b & 0x3F) | flags
            }
        }
        return pairs
    }()

    /// Decodes `input`, accepting either alphabet (but not both in one string),
    /// with or without padding. Returns the bytes and the alphabet seen.
    ///
    /// Runs once per token (and once per signature) on the hot path, so whole
    /// groups of four alphabet characters of one alphabet are decoded without
    /// the per-character checks; a group with anything else (`=`, white space,
    /// garbage, both alphabets) goes through the general step one character at
    /// a time, which decides errors and their offsets exactly as before.
    static func decode(
        _ input: Span<UInt8>,
        whitespace: Whitespace,
        spacesArePlus: Bool = false
    ) throws(Failure) -> (bytes: [UInt8], alphabet: Alphabet) {
        var outcome = Outcome()
        let output = input.withUnsafeBufferPointer { input in
            [UInt8](unsafeUninitializedCapacity: input.count / 4 * 3 + 5) { out, initialized in
                initialized = Decoding(input: input, whitespace: whitespace, spacesArePlus: spacesArePlus)
                    .write(into: out, outcome: &outcome)
            }
        }
        if let failure = outcome.failure { throw failure }
        return (output, outcome.sawURL ? .url : .standard)
    }

    private struct Outcome {
        var failure: Failure? = nil
        var sawURL = false
    }

    /// The decoding loop, writing into the new array's storage.
    private struct Decoding {
        let input: UnsafeBufferPointer<UInt8>
        let whitespace: Whitespace
        let spacesArePlus: Bool

        func write(into out: UnsafeMutableBufferPointer<UInt8>, outcome: inout Outcome) -> Int {
            var failure: Failure? = nil
            var sawURL = false
            let written = table.withUnsafeBufferPointer { table in
                fast.withUnsafeBufferPointer { fast in
                    pairs.withUnsafeBufferPointer { pairs in
                        var count = 0
                        var accumulator: UInt32 = 0
                        var pending = 0
                        var padding = 0
                        var sawStandard = false
                        var index = 0
                        let end = input.count
                        decoding: while index < end {
                            // Fast path: eight, then four, alphabet characters at a quantum boundary.
                            if pending == 0, padding == 0 {
                                // Each step stores eight bytes (six of data); `out` has room for
                                // them, or the step is left to the four-character path below.
                                // The loop's state is in locals, written back after it: the
                                // variables the closures share live in memory.
                                if index &+ 8 <= end, count &+ 8 <= out.count {
                                    let target = out.baseAddress!
                                    let room = out.count
                                    var at = index
                                    var written = count
                                    var standard = sawStandard
                                    var url = sawURL
                                    while at &+ 8 <= end, written &+ 8 <= room {
                                        // Eight characters as four pairs: one table load per pair.
                                        let word = UnsafeRawPointer(input.baseAddress! + at).loadUnaligned(as: UInt64.self)
                                        let a = pairs[Int(truncatingIfNeeded: word & 0xFFFF)]
                                        let b = pairs[Int(truncatingIfNeeded: (word >> 16) & 0xFFFF)]
                                        let c = pairs[Int(truncatingIfNeeded: (word >> 32) & 0xFFFF)]
                                        let d = pairs[Int(truncatingIfNeeded: word >> 48)]
                                        let flags = (a | b | c | d) & 0xF000
                                        if flags != 0 {
                                            if flags == 0x1000 && !url {
                                                standard = true
                                            } else if flags == 0x2000 && !standard {
                                                url = true
                                            } else {
                                                break
                                            }
                                        }
                                        // Six bytes of data, big-endian, then two zeros that the next
                                        // step overwrites or the array's count leaves out: one store.
                                        let bytes =
                                            UInt64(a & 0x0FFF) << 52 | UInt64(b & 0x0FFF) << 40
                                            | UInt64(c & 0x0FFF) << 28 | UInt64(d & 0x0FFF) << 16
                                        UnsafeMutableRawPointer(target + written).storeBytes(of: bytes.bigEndian, as: UInt64.self)
                                        written &+= 6
                                        at &+= 8
                                    }
                                    index = at
                                    count = written
                                    sawStandard = standard
                                    sawURL = url
                                }
                                if index &+ 4 <= end {
                                    let a = fast[Int(input[index])]
                                    let b = fast[Int(input[index &+ 1])]
                                    let c = fast[Int(input[index &+ 2])]
                                    let d = fast[Int(input[index &+ 3])]
                                    let flags = (a | b | c | d) & 0xC0
                                    let take: Bool
                                    if flags == 0 {
                                        take = true
                                    } else if flags == 0x40 && !sawURL {
                                        sawStandard = true
                                        take = true
                                    } else if flags == 0x80 && !sawStandard {
                                        sawURL = true
                                        take = true
                                    } else {
                                        take = false
                                    }
                                    if take {
                                        let group = UInt32(a & 0x3F) << 18 | UInt32(b & 0x3F) << 12 | UInt32(c & 0x3F) << 6 | UInt32(d & 0x3F)
                                        out[count] = UInt8(truncatingIfNeeded: group >> 16)
                                        out[count &+ 1] = UInt8(truncatingIfNeeded: group >> 8)
                                        out[count &+ 2] = UInt8(truncatingIfNeeded: group)
                                        count &+= 3
                                        index &+= 4
                                        continue decoding
                                    }
                                }
                            }
                            guard index < end else { break decoding }
                            // General step: one character, every rule checked.
                            var byte = input[index]
                            if byte == UInt8(ascii: " ") && spacesArePlus { byte = UInt8(ascii: "+") }
                            let value = table[Int(byte)]
                            if value == 0xFF {
                                switch byte {
                                case UInt8(ascii: "\r"), UInt8(ascii: "\n"):
                                    index += 1
                                    continue decoding
                                case UInt8(ascii: " "), UInt8(ascii: "\t"):
                                    if whitespace == .any {
                                        index += 1
                                        continue decoding
                                    }
                                    failure = Failure(reason: byte == UInt8(ascii: " ") ? .space : .invalidCharacter(byte), offset: index)
                                default:
                                    failure = Failure(reason: .invalidCharacter(byte), offset: index)
                                }
                                break decoding
                            }
                            if value == 64 {
                                padding += 1
                                // Padding completes a quantum of 2 or 3 characters, at most two `=`.
                                if pending < 2 || pending + padding > 4 {
                                    failure = Failure(reason: .misplacedPadding, offset: index)
                                    break decoding
                                }
                                index += 1
                                continue decoding
                            }
                            if padding > 0 {
                                failure = Failure(reason: .misplacedPadding, offset: index)
                                break decoding
                            }
                            switch byte {
                            case UInt8(ascii: "+"), UInt8(ascii: "/"): sawStandard = true
                            case UInt8(ascii: "-"), UInt8(ascii: "_"): sawURL = true
                            default: break
                            }
                            if sawStandard && sawURL {
                                failure = Failure(reason: .mixedAlphabets, offset: index)
                                break decoding
                            }
                            accumulator = accumulator << 6 | UInt32(value)
                            pending += 1
                            if pending == 4 {
                                out[count] = UInt8(truncatingIfNeeded: accumulator >> 16)
                                out[count + 1] = UInt8(truncatingIfNeeded: accumulator >> 8)
                                out[count + 2] = UInt8(truncatingIfNeeded: accumulator)
                                count += 3
                                accumulator = 0
                                pending = 0
                            }
                            index += 1
                        }
                        if failure == nil {
                            if padding > 0 && pending + padding != 4 {
                                failure = Failure(reason: .truncated, offset: input.count)
                            } else {
                                switch pending {
                                case 0: break
                                case 1: failure = Failure(reason: .truncated, offset: input.count)
                                case 2:
                                    out[count] = UInt8(truncatingIfNeeded: accumulator >> 4)
                                    count += 1
                                default:
                                    out[count] = UInt8(truncatingIfNeeded: accumulator >> 10)
                                    out[count + 1] = UInt8(truncatingIfNeeded: accumulator >> 2)
                                    count += 2
                                }
                            }
                        }
                        return count
                    }
                }
            }
            outcome = Outcome(failure: failure, sawURL: sawURL)
            return written
        }
    }
}
