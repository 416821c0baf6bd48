/// JSON written as UTF-8 bytes, members separated as they come, into one
/// buffer of its own (a `[UInt8]` would check uniqueness and capacity on
/// each of the few hundred appends a token's object takes).
///
/// The one JSON writer of the package: the library's reports and the gate's
/// bodies and log lines (`package`), so that no JSON is built by string
/// interpolation and every string is escaped by one rule. A string never
/// carries a scalar that ``TerminalText/isUnsafe(_:)`` names: each is written
/// as an escape, since a JSON log or report is read in a terminal too.
package struct JSONWriter: ~Copyable {
    /// How the three controls JSON has short escapes for (`\n`, `\r`, `\t`) are written.
    package enum ControlEscapes: Sendable {
        /// `\n`, `\r`, `\t`: the reports' form, which their tests and documents show.
        case short
        /// `\u000a`, `\u000d`, `\u0009`, like every other control: the gate's
        /// form, every scalar the terminal rule names written `\uXXXX` in its
        /// bodies and log lines, the bytes its clients and log collectors have
        /// always been given.
        case unicode
    }

    private var output: GrowableBytes
    private let shortControlEscapes: Bool
    /// Bit n set: the container at depth n has no member yet.
    private var empty: UInt64 = 0
    private var depth = 0
    /// Where each memo slot's string was last written, escaped (see
    /// ``string(_:repeating:)``).
    private var memos: [Memo?] = []

    private struct Memo {
        var text: String
        var start: Int
        var count: Int
    }

    package init(capacity: Int = 4096, controlEscapes: ControlEscapes = .short) {
        output = GrowableBytes(capacity: capacity)
        shortControlEscapes = controlEscapes == .short
    }

    /// What was written so far, without a copy.
    func withSpan<R>(_ body: (Span<UInt8>) -> R) -> R {
        output.withSpan(body)
    }

    /// A copy of what was written.
    package var bytes: [UInt8] { output.array }

    /// What was written, as a string.
    package var text: String { output.string }

    /// Bytes written so far: where the next write starts.
    var count: Int { output.count }

    /// The bytes already written at `range` again (a part of an object that
    /// repeats from the object before; see `ReportFragments`). The
    /// containers' state is left as it is: the part must leave it as it found it.
    mutating func repeatBytes(_ range: Range<Int>) {
        output.appendCopy(of: range)
    }

    /// `bytes` between quotes, for text that never needs escaping (an ISO
    /// 8601 instant: digits, `-`, `T`, `:`, `.` and `Z`).
    mutating func quotedPlainText(_ bytes: Span<UInt8>) {
        output.append(UInt8(ascii: "\""))
        output.append(bytes)
        output.append(UInt8(ascii: "\""))
    }

    /// Text as it is, outside any JSON value (separators, newlines, a text block).
    package mutating func raw(_ text: StaticString) {
        literal(text)
    }

    package mutating func raw(_ text: String) {
        output.append(text)
    }

    /// A value already written as JSON by another writer (a library report
    /// inside the debugger's answer), after its ``element()`` or ``member(_:)``.
    package mutating func encoded(_ json: [UInt8]) {
        output.append(json.span)
    }

    package mutating func beginObject() { open(UInt8(ascii: "{")) }
    package mutating func endObject() { close(UInt8(ascii: "}")) }
    package mutating func beginArray() { open(UInt8(ascii: "[")) }
    package mutating func endArray() { close(UInt8(ascii: "]")) }

    /// `"key":`, after a comma unless it is the container's first member.
    @inline(__always) package mutating func key(_ key: String) {
        element()
        string(key)
        output.append(UInt8(ascii: ":"))
    }

    /// The same for a key known to need no escaping (the fixed keys of an object).
    package mutating func member(_ key: StaticString) {
        element()
        let length = key.utf8CodeUnitCount
        output.appendInPlace(maximumCount: length &+ 3) { out in
            out[0] = UInt8(ascii: "\"")
            (out + 1).update(from: key.utf8Start, count: length)
            out[1 &+ length] = UInt8(ascii: "\"")
            out[2 &+ length] = UInt8(ascii: ":")
            return length &+ 3
        }
    }

    /// The comma before an array element, unless it is the first.
    package mutating func element() {
        let bit: UInt64 = 1 << UInt64(depth)
        if empty & bit != 0 {
            empty &= ~bit
        } else {
            output.append(UInt8(ascii: ","))
        }
    }

    package mutating func null() {
        literal("null")
    }

    package mutating func bool(_ value: Bool) {
        value ? literal("true") : literal("false")
    }

    package mutating func int(_ value: Int?) {
        guard let value else { return null() }
        if value < 0 { output.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var scale: UInt = 1
        while magnitude / scale >= 10 { scale *= 10 }
        while scale > 0 {
            output.append(UInt8(ascii: "0") + UInt8(magnitude / scale))
            magnitude %= scale
            scale /= 10
        }
    }

    /// A JSON string literal, or `null`: quotes, backslashes, control
    /// characters (C0, DEL, C1) and the other scalars ``TerminalText/isUnsafe(_:)``
    /// names escaped, everything else as its UTF-8.
    @inline(__always) package mutating func string(_ text: String?) {
        guard let text else { return null() }
        // A native string lends its UTF-8 in place; others are copied once.
        if text.utf8.withContiguousStorageIfAvailable({ appendQuoted($0) }) == nil {
            var copy = text
            copy.withUTF8 { appendQuoted($0) }
        }
    }

    /// A JSON string literal of UTF-8 bytes taken from a larger buffer (a
    /// token's signature text), escaped like ``string(_:)``, without making a `String`.
    mutating func string(utf8 bytes: ArraySlice<UInt8>) {
        bytes.withUnsafeBufferPointer { appendQuoted($0) }
    }

    /// The same, for a member whose value often repeats from one object to
    /// the next (a verdict's reason, the key that verified it, a resource): when
    /// `text` equals what was written for `slot` last time, its escaped bytes
    /// are copied from there instead of escaped again. One writer renders a
    /// chunk of consecutive tokens, so most objects after the first hit.
    mutating func string(_ text: String?, repeating slot: Int) {
        guard let text else { return null() }
        if slot < memos.count, let memo = memos[slot], Self.sameBytes(memo.text, text) {
            output.appendCopy(of: memo.start..<(memo.start + memo.count))
            return
        }
        let start = output.count
        string(text)
        if slot >= memos.count { memos.append(contentsOf: repeatElement(nil, count: slot + 1 - memos.count)) }
        memos[slot] = Memo(text: text, start: start, count: output.count - start)
    }

    /// Byte equality: `==` would reuse the bytes of `Café` composed for `Café`
    /// decomposed, and the output must carry each value's own bytes.
    private static func sameBytes(_ lhs: String, _ rhs: String) -> Bool {
        guard lhs.utf8.count == rhs.utf8.count else { return false }
        let equal = lhs.utf8.withContiguousStorageIfAvailable { left in
            rhs.utf8.withContiguousStorageIfAvailable { right in
                guard let leftBase = left.baseAddress, let rightBase = right.baseAddress else { return left.count == right.count }
                return LibC.bytesEqual(leftBase, rightBase, count: left.count)
            }
        }
        return (equal ?? nil) ?? lhs.utf8.elementsEqual(rhs.utf8)
    }

    private mutating func appendQuoted(_ utf8: UnsafeBufferPointer<UInt8>) {
        // Room for the worst case (every byte as \u00XX) up front, so the
        // copying below needs no capacity checks.
        let short = shortControlEscapes
        output.appendInPlace(maximumCount: utf8.count &* 6 &+ 2) { out in
            Self.writeQuoted(utf8, to: out, shortControlEscapes: short)
        }
    }

    /// Writes `utf8` quoted and escaped at `out` (room for 6 bytes per input
    /// byte and the quotes) and returns the number of bytes written.
    private static func writeQuoted(
        _ utf8: UnsafeBufferPointer<UInt8>,
        to out: UnsafeMutablePointer<UInt8>,
        shortControlEscapes: Bool
    ) -> Int {
        let length = utf8.count
        var written = 0
        out[0] = UInt8(ascii: "\"")
        written = 1
        guard let source = utf8.baseAddress else {
            out[written] = UInt8(ascii: "\"")
            return written &+ 1
        }
        @inline(__always) func copyRun(_ start: Int, count runLength: Int) {
            guard runLength > 0 else { return }
            (out + written).update(from: source + start, count: runLength)
            written &+= runLength
        }
        @inline(__always) func put(_ first: UInt8, _ second: UInt8) {
            out[written] = first
            out[written &+ 1] = second
            written &+= 2
        }
        @inline(__always) func putUnicodeEscape(_ scalar: UInt32) {
            put(UInt8(ascii: "\\"), UInt8(ascii: "u"))
            put(ByteRules.lowercaseHexDigit(UInt8(scalar >> 12 & 0xF)), ByteRules.lowercaseHexDigit(UInt8(scalar >> 8 & 0xF)))
            put(ByteRules.lowercaseHexDigit(UInt8(scalar >> 4 & 0xF)), ByteRules.lowercaseHexDigit(UInt8(scalar & 0xF)))
        }
        var runStart = 0
        var index = 0
        while index < length {
            // Eight bytes at a time while none needs escaping (the usual case).
            if index &+ 8 <= length,
                !mayNeedEscaping(UnsafeRawPointer(source + index).loadUnaligned(as: UInt64.self))
            {
                index &+= 8
                continue
            }
            let end = min(index &+ 8, length)
            while index < end {
                let byte = source[index]
                index &+= 1
                if byte >= 0x80 {
                    // A character that could drive a terminal (C1, bidi, the
                    // line separators, BOM): written as \uXXXX, the same string.
                    let sequence = unsafeSequenceLength(source + (index &- 1), available: length &- index &+ 1)
                    guard sequence > 0 else { continue }
                    copyRun(runStart, count: index &- 1 &- runStart)
                    putUnicodeEscape(escapedScalar(source + (index &- 1), length: sequence))
                    index &+= sequence &- 1
                    runStart = index
                    continue
                }
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte == 0x7F else { continue }
                copyRun(runStart, count: index &- 1 &- runStart)
                runStart = index
                switch byte {
                case UInt8(ascii: "\""): put(UInt8(ascii: "\\"), UInt8(ascii: "\""))
                case UInt8(ascii: "\\"): put(UInt8(ascii: "\\"), UInt8(ascii: "\\"))
                case UInt8(ascii: "\n") where shortControlEscapes: put(UInt8(ascii: "\\"), UInt8(ascii: "n"))
                case UInt8(ascii: "\r") where shortControlEscapes: put(UInt8(ascii: "\\"), UInt8(ascii: "r"))
                case UInt8(ascii: "\t") where shortControlEscapes: put(UInt8(ascii: "\\"), UInt8(ascii: "t"))
                default:
                    putUnicodeEscape(UInt32(byte))
                }
            }
        }
        copyRun(runStart, count: length &- runStart)
        out[written] = UInt8(ascii: "\"")
        return written &+ 1
    }

    /// The length of the UTF-8 sequence at `start` when it encodes a scalar
    /// that ``TerminalText/isUnsafe(_:)`` names (C1 controls U+0080–U+009F,
    /// U+061C, U+200E/F, U+2028–U+202E, U+2066–U+2069, U+FEFF), else 0.
    @inline(__always) private static func unsafeSequenceLength(_ start: UnsafePointer<UInt8>, available: Int) -> Int {
        let lead = start[0]
        switch lead {
        case 0xC2 where available >= 2 && start[1] <= 0x9F: return 2
        case 0xD8 where available >= 2 && start[1] == 0x9C: return 2
        case 0xE2 where available >= 3:
            let second = start[1]
            let third = start[2]
            if second == 0x80 && (third == 0x8E || third == 0x8F || (0xA8...0xAE).contains(third)) { return 3 }
            if second == 0x81 && (0xA6...0xA9).contains(third) { return 3 }
            return 0
        case 0xEF where available >= 3 && start[1] == 0xBB && start[2] == 0xBF: return 3
        default: return 0
        }
    }

    /// The scalar of the 2- or 3-byte sequence at `start`.
    @inline(__always) private static func escapedScalar(_ start: UnsafePointer<UInt8>, length: Int) -> UInt32 {
        length == 2
            ? UInt32(start[0] & 0x1F) << 6 | UInt32(start[1] & 0x3F)
            : UInt32(start[0] & 0x0F) << 12 | UInt32(start[1] & 0x3F) << 6 | UInt32(start[2] & 0x3F)
    }

    /// True when some byte of `word` is a control character, `"`, `\\`, DEL or
    /// not ASCII (SWAR: a byte below 0x20, at or above 0x80, or equal to one of
    /// the three; may only err towards true, which just sends those bytes
    /// through the byte loop).
    @inline(__always) private static func mayNeedEscaping(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let high: UInt64 = 0x8080_8080_8080_8080
        func hasZeroByte(_ x: UInt64) -> UInt64 { (x &- ones) & ~x & high }
        let below = (word &- 0x20 &* ones) & ~word & high
        return below | (word & high) | hasZeroByte(word ^ (0x22 &* ones)) | hasZeroByte(word ^ (0x5C &* ones)) | hasZeroByte(word ^ (0x7F &* ones))
            != 0
    }

    /// Fixed text outside any JSON value (a member's name with its separators,
    /// `null`): a string literal passed to ``raw(_:)`` would be a `String`,
    /// made and measured each time.
    mutating func literal(_ text: StaticString) {
        output.append(text)
    }

    private mutating func open(_ bracket: UInt8) {
        output.append(bracket)
        depth += 1
        empty |= 1 << UInt64(depth)
    }

    private mutating func close(_ bracket: UInt8) {
        empty &= ~(1 << UInt64(depth))
        depth -= 1
        output.append(bracket)
    }
}
