/// Where a JSON value or error is, in the bytes the scanner was fed.
package struct JSONPosition: Sendable, Hashable {
    /// 0-based byte offset in the stream.
    package var offset: Int
    /// 1-based line and column (columns count bytes).
    package var line: Int
    package var column: Int

    package init(offset: Int, line: Int, column: Int) {
        self.offset = offset
        self.line = line
        self.column = column
    }

    package var location: SourceLocation { SourceLocation(byteOffset: offset, line: line, column: column) }
}

/// The kinds of JSON value, as a value starts.
package enum JSONValueKind: Sendable {
    case object, array, string, number, literal
}

/// A complete scalar. Its text is only given when its start was answered with ``JSONCapture/keep``.
package enum JSONScalar: Sendable {
    case string, number, `true`, `false`, null
}

/// What the scanner does with a value as it reads it.
package enum JSONCapture: Sendable {
    /// Validate only: no byte of a string or number is kept, and nothing inside
    /// an array or object is reported (nor its end), so unused members cost no memory.
    case skip
    /// Keep the text (unescaped, for a string), refusing one longer than `limit` bytes
    /// as written; for an array or object, report what is inside it.
    case keep(limit: Int)
    /// A string kept when it is at most `limit` bytes as written; a longer one is
    /// validated to its end without being kept and reported through
    /// ``JSONEventHandler/stringOverLimit(byteCount:)`` instead of ``JSONEventHandler/scalar(_:text:)``.
    /// For a document that carries large values a reader may do without (a
    /// capture's bodies): the value is skipped and said so, and the scan goes on.
    case keepWithin(limit: Int)
}

/// What a ``JSONScanner`` reports, as each event becomes known. Every method may
/// throw to stop the scan (the error is then the scan's result).
package protocol JSONEventHandler {
    /// A value starts at `position` (for a container: its bracket). Containers nest.
    mutating func valueStarts(_ kind: JSONValueKind, at position: JSONPosition) throws(TokenError) -> JSONCapture
    /// An object's member name starts; `true` to have it kept and given to ``key(_:)``.
    mutating func keyStarts() -> Bool
    /// A member name that ``keyStarts()`` asked for, unescaped.
    mutating func key(_ bytes: [UInt8], at position: JSONPosition) throws(TokenError)
    /// A scalar ended; `text` is its captured text (unescaped UTF-8), or empty when skipped.
    mutating func scalar(_ kind: JSONScalar, text: [UInt8]) throws(TokenError)
    mutating func containerEnds() throws(TokenError)
    /// A string asked for with ``JSONCapture/keepWithin(limit:)`` ended longer than its
    /// limit; `byteCount` is its length as written.
    mutating func stringOverLimit(byteCount: Int) throws(TokenError)
}

extension JSONEventHandler {
    /// Only a handler that answers ``JSONCapture/keepWithin(limit:)`` is ever told.
    package mutating func stringOverLimit(byteCount: Int) throws(TokenError) {}
}

/// A strict RFC 8259 scanner over bytes fed in chunks of any size.
///
/// Why not Foundation's decoder: it builds a value for every member of the
/// document, so a 30 MB response of empty objects cost 850 MB and 70 s. This
/// scanner holds only the open containers (at most ``maxDepth``, a flag each)
/// and the text of the strings its handler asks for; everything else is
/// validated and forgotten as it passes. Each byte is looked at once, so the
/// cost is linear in the document.
///
/// Strict means: one value (its handler decides which kinds it takes) and white
/// space around it; strings with only the escapes of RFC 8259 §7, `\u` surrogates
/// in pairs, no raw control characters, well-formed UTF-8 (no overlong forms, no
/// surrogates); numbers exactly by the grammar of RFC 8259 §6 (no leading zeros, no `+`,
/// no bare `.`); no trailing commas, no comments, no `NaN`.
package struct JSONScanner {
    package let maxDepth: Int
    /// Applies to every string and number the handler skips or keeps without saying otherwise.
    package let maxStringBytes: Int
    /// Applies to a member name the handler keeps: a reader that lets values run long
    /// (skipping them costs no memory) still holds no long name.
    package let maxKeyBytes: Int

    private enum State {
        /// A value must come: at the start, after `:` and after `,` in an array.
        case value
        /// After `[`: a value or `]`.
        case valueOrArrayEnd
        /// After `{`: a member name or `}`.
        case keyOrObjectEnd
        /// After `,` in an object.
        case key
        case colon
        /// After a value inside a container: `,` or its end; at the top level: only white space.
        case afterValue
        case string
        /// After a backslash.
        case escape
        /// Inside `\uXXXX`.
        case unicodeEscape
        /// After a high surrogate's escape: its low surrogate's `\` must come, then `u`.
        case lowSurrogateBackslash
        case lowSurrogateU
        /// Inside a multi-byte UTF-8 sequence.
        case utf8Continuation
        case number(NumberPhase)
        case literal
        case failed
    }

    /// Where a number is in the grammar of RFC 8259 §6; `isFinal` where it may end.
    private enum NumberPhase {
        case minus, zero, integer, dot, fraction, exponentMark, exponentSign, exponent
        var isFinal: Bool {
            switch self {
            case .zero, .integer, .fraction, .exponent: true
            case .minus, .dot, .exponentMark, .exponentSign: false
            }
        }
    }

    private var state = State.value
    /// Why the scan failed, once `state` is `.failed`.
    private var failure: TokenError?
    /// One flag per open container, innermost last: true for an object.
    private var containers: [Bool] = []
    private var topLevelDone = false
    /// The depth of the container its handler answered with `.skip` (0: none): inside
    /// it everything is validated and nothing reported, which is what makes unused
    /// members cheap.
    private var skippedDepth = 0

    private var position = JSONPosition(offset: 0, line: 1, column: 1)
    /// Where the scalar or member name being read started.
    private var tokenStart = JSONPosition(offset: 0, line: 1, column: 1)

    // The string, number or literal in progress.
    private var stringIsKey = false
    private var capturing = false
    /// The string in progress was asked for with `.keepWithin`: past `limit` it is
    /// dropped, not refused (then `overLimit`).
    private var dropsOverLimit = false
    private var overLimit = false
    private var limit = 0
    private var written = 0
    private var text: [UInt8] = []
    private var hexDigits = 0
    private var codeUnit: UInt32 = 0
    private var highSurrogate: UInt32 = 0
    private var utf8Remaining = 0
    private var utf8Low: UInt8 = 0x80
    private var utf8High: UInt8 = 0xBF
    /// The literal being matched (`true`, `false`, `null`) as its UTF-8 bytes.
    private var literalExpected: [UInt8] = Self.trueLiteral
    private var literalMatched = 0
    private var literalKind = JSONScalar.true
    private static let trueLiteral = Array("true".utf8)
    private static let falseLiteral = Array("false".utf8)
    private static let nullLiteral = Array("null".utf8)

    package init(
        maxDepth: Int,
        maxStringBytes: Int,
        maxKeyBytes: Int? = nil,
        startingAt start: JSONPosition = JSONPosition(offset: 0, line: 1, column: 1)
    ) {
        self.maxDepth = maxDepth
        self.maxStringBytes = maxStringBytes
        self.maxKeyBytes = min(maxKeyBytes ?? maxStringBytes, maxStringBytes)
        position = start
    }

    /// The first error, once the scan has failed; nothing more is read after it.
    package var error: TokenError? { failure }

    /// Bytes held between calls: the text being kept and one flag per open container.
    package var retainedBytes: Int { text.capacity + containers.capacity }

    /// Where the next byte fed will be.
    package var nextPosition: JSONPosition { position }

    /// Reads the next chunk of the document.
    package mutating func scan(_ bytes: Span<UInt8>, with handler: inout some JSONEventHandler) {
        if failure != nil { return }
        do {
            try scanChunk(bytes, with: &handler)
        } catch {
            fail(with: error)
        }
    }

    /// Ends the document: it must be one complete value.
    package mutating func finish(with handler: inout some JSONEventHandler) -> TokenError? {
        if let failure { return failure }
        if case .number(let phase) = state, containers.isEmpty, phase.isFinal {
            do {
                try endScalar(.number, with: &handler)
            } catch {
                fail(with: error)
                return error
            }
        }
        if topLevelDone, case .afterValue = state { return nil }
        let error = TokenError(
            .invalidJSON,
            stage: .transport,
            topLevelDone || !containers.isEmpty || isInsideScalar
                ? "the JSON document ends before it is complete" : "the JSON document is empty",
            at: position.location
        )
        fail(with: error)
        return error
    }

    private mutating func fail(with error: TokenError) {
        failure = error
        state = .failed
    }

    private var isInsideScalar: Bool {
        switch state {
        case .string, .escape, .unicodeEscape, .lowSurrogateBackslash, .lowSurrogateU, .utf8Continuation, .number, .literal: true
        default: false
        }
    }

    // MARK: - The state machine

    private mutating func scanChunk(_ bytes: Span<UInt8>, with handler: inout some JSONEventHandler) throws(TokenError) {
        var index = 0
        let count = bytes.count
        while index < count {
            let byte = bytes[index]
            switch state {
            case .string:
                // The common case in a tight loop: plain bytes of a string.
                let runStart = index
                let runEnd = Self.plainRunEnd(in: bytes, from: index)
                if runEnd > runStart {
                    try addWritten(runEnd - runStart)
                    if capturing { text.append(copying: bytes.extracting(runStart..<runEnd)) }
                    advance(by: runEnd - runStart)
                    index = runEnd
                    continue
                }
                try stringByte(byte, with: &handler)
            case .escape:
                try escapeByte(byte)
            case .unicodeEscape:
                try unicodeEscapeByte(byte)
            case .lowSurrogateBackslash:
                guard byte == UInt8(ascii: "\\") else { throw loneSurrogate() }
                try addWritten(1)
                state = .lowSurrogateU
            case .lowSurrogateU:
                guard byte == UInt8(ascii: "u") else { throw loneSurrogate() }
                try addWritten(1)
                hexDigits = 0
                codeUnit = 0
                state = .unicodeEscape
            case .utf8Continuation:
                guard byte >= utf8Low && byte <= utf8High else {
                    throw fail("byte 0x\(String(byte, radix: 16, uppercase: true)) breaks a UTF-8 sequence in a string (JSON is UTF-8)")
                }
                try addWritten(1)
                if capturing { text.append(byte) }
                utf8Low = 0x80
                utf8High = 0xBF
                utf8Remaining -= 1
                if utf8Remaining == 0 { state = .string }
            case .number(let phase):
                if try !numberByte(byte, phase: phase, with: &handler) {
                    continue  // the number ended before this byte, which is read again
                }
            case .literal:
                let expected = literalExpected[literalMatched]
                guard byte == expected else { throw fail("invalid literal: expected 'true', 'false' or 'null'") }
                literalMatched += 1
                if literalMatched == literalExpected.count {
                    advance(by: 1)
                    index += 1
                    try endScalar(literalKind, with: &handler)
                    continue
                }
            case .failed:
                return
            case .value, .valueOrArrayEnd, .keyOrObjectEnd, .key, .colon, .afterValue:
                // Between tokens: white space in a tight loop, counting lines.
                if byte == 0x20 || byte == 0x09 || byte == 0x0D {
                    advance(by: 1)
                    index += 1
                    continue
                }
                if byte == 0x0A {
                    position.offset += 1
                    position.line += 1
                    position.column = 1
                    index += 1
                    continue
                }
                // A value's first byte is taken here, like every other structural byte.
                try structuralByte(byte, with: &handler)
            }
            advance(by: 1)
            index += 1
        }
    }

    private mutating func structuralByte(_ byte: UInt8, with handler: inout some JSONEventHandler) throws(TokenError) {
        switch state {
        case .colon:
            guard byte == UInt8(ascii: ":") else { throw fail("expected ':' after a member name") }
            state = .value
        case .key, .keyOrObjectEnd:
            if byte == UInt8(ascii: "}") {
                guard case .keyOrObjectEnd = state else { throw fail("a trailing comma before '}'") }
                try endContainer(with: &handler)
            } else if byte == UInt8(ascii: "\"") {
                beginString(isKey: true, capture: skippedDepth == 0 && handler.keyStarts() ? .keep(limit: maxKeyBytes) : .skip)
            } else {
                throw fail("expected a member name in double quotes")
            }
        case .afterValue:
            guard let isObject = containers.last else {
                throw fail("content after the end of the JSON document")
            }
            if byte == UInt8(ascii: ",") {
                state = isObject ? .key : .value
            } else if byte == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                try endContainer(with: &handler)
            } else {
                throw fail(isObject ? "expected ',' or '}' after a member" : "expected ',' or ']' after an element")
            }
        case .value, .valueOrArrayEnd:
            if byte == UInt8(ascii: "]") {
                guard case .valueOrArrayEnd = state else {
                    throw fail(containers.last == false ? "a trailing comma before ']'" : "expected a JSON value")
                }
                try endContainer(with: &handler)
                return
            }
            if containers.isEmpty && topLevelDone { throw fail("content after the end of the JSON document") }
            try valueByte(byte, with: &handler)
        default:
            preconditionFailure("not between tokens")
        }
    }

    private mutating func valueByte(_ byte: UInt8, with handler: inout some JSONEventHandler) throws(TokenError) {
        tokenStart = position
        switch byte {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            let isObject = byte == UInt8(ascii: "{")
            guard containers.count < maxDepth else {
                throw TokenError(
                    .jsonTooDeep,
                    stage: .transport,
                    "JSON nested deeper than \(maxDepth) levels (maxJSONDepth)",
                    at: position.location
                )
            }
            if skippedDepth == 0, case .skip = try handler.valueStarts(isObject ? .object : .array, at: position) {
                skippedDepth = containers.count + 1
            }
            containers.append(isObject)
            state = isObject ? .keyOrObjectEnd : .valueOrArrayEnd
        case UInt8(ascii: "\""):
            beginString(isKey: false, capture: skippedDepth == 0 ? try handler.valueStarts(.string, at: position) : .skip)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            beginCapture(skippedDepth == 0 ? try handler.valueStarts(.number, at: position) : .skip)
            try addWritten(1)
            if capturing { text.append(byte) }
            state = .number(byte == UInt8(ascii: "-") ? .minus : byte == UInt8(ascii: "0") ? .zero : .integer)
        case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
            if skippedDepth == 0 { _ = try handler.valueStarts(.literal, at: position) }
            (literalExpected, literalKind) =
                byte == UInt8(ascii: "t")
                ? (Self.trueLiteral, .true)
                : byte == UInt8(ascii: "f") ? (Self.falseLiteral, .false) : (Self.nullLiteral, .null)
            literalMatched = 1
            state = .literal
        default:
            throw fail(byte == UInt8(ascii: "/") ? "comments are not JSON" : "expected a JSON value")
        }
    }

    private mutating func endContainer(with handler: inout some JSONEventHandler) throws(TokenError) {
        if skippedDepth == 0 {
            try handler.containerEnds()
        } else if skippedDepth == containers.count {
            skippedDepth = 0  // the skipped container ended: its end is not reported either
        }
        containers.removeLast()
        valueEnded()
    }

    private mutating func valueEnded() {
        state = .afterValue
        if containers.isEmpty { topLevelDone = true }
    }

    // MARK: Strings

    private mutating func beginCapture(_ capture: JSONCapture) {
        switch capture {
        case .skip:
            capturing = false
            limit = maxStringBytes
        case .keep(let keepLimit):
            capturing = true
            limit = keepLimit
        case .keepWithin(let keepLimit):
            capturing = true
            limit = keepLimit
        }
        if case .keepWithin = capture { dropsOverLimit = true } else { dropsOverLimit = false }
        overLimit = false
        written = 0
        text.removeAll(keepingCapacity: text.capacity <= 64 * 1024)
    }

    private mutating func beginString(isKey: Bool, capture: JSONCapture) {
        tokenStart = position
        stringIsKey = isKey
        beginCapture(capture)
        state = .string
    }

    /// Counts bytes of the string or number as written, against its limit.
    private mutating func addWritten(_ count: Int) throws(TokenError) {
        written += count
        if dropsOverLimit, written > limit {
            // From here on the string is only validated, against the scanner's own bound.
            overLimit = true
            capturing = false
            dropsOverLimit = false
            limit = maxStringBytes
            text.removeAll(keepingCapacity: false)
        }
        guard written <= limit else {
            throw TokenError(
                .jsonLimitExceeded,
                stage: .transport,
                "a JSON \(isInsideNumber ? "number" : "string") longer than \(limit) bytes (\(limit == maxStringBytes ? "maxJSONStringBytes" : stringIsKey ? "the member name limit" : "maxRecordBytes"))",
                at: tokenStart.location
            )
        }
    }

    private var isInsideNumber: Bool {
        if case .number = state { return true }
        return false
    }

    /// Where the run of plain string bytes — printable ASCII but `"` and `\` —
    /// that starts at `start` ends. Eight bytes a step while none ends it: a
    /// capture's Base64 bodies are long runs, and most of the bytes of a HAR.
    private static func plainRunEnd(in bytes: Span<UInt8>, from start: Int) -> Int {
        var index = start
        let count = bytes.count
        while index &+ 8 <= count {
            var word: UInt64 = 0
            for shift in 0..<8 { word |= UInt64(bytes[index &+ shift]) &<< (shift &* 8) }
            if mayEndRun(word) { break }
            index &+= 8
        }
        while index < count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 || byte >= 0x80 { break }
            index &+= 1
        }
        return index
    }

    /// Whether any byte of `word` is below 0x20, at or above 0x80, `"` or `\`
    /// (the classic has-zero-byte and has-less-than tests, no false negative).
    @inline(__always) private static func mayEndRun(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let high: UInt64 = 0x8080_8080_8080_8080
        func hasZeroByte(_ x: UInt64) -> UInt64 { (x &- ones) & ~x & high }
        let below = (word &- 0x20 &* ones) & ~word & high
        return below | (word & high) | hasZeroByte(word ^ (0x22 &* ones)) | hasZeroByte(word ^ (0x5C &* ones)) != 0
    }

    private mutating func stringByte(_ byte: UInt8, with handler: inout some JSONEventHandler) throws(TokenError) {
        switch byte {
        case UInt8(ascii: "\""):
            if stringIsKey {
                if capturing { try handler.key(text, at: tokenStart) }
                state = .colon
            } else {
                if skippedDepth == 0 {
                    if overLimit {
                        try handler.stringOverLimit(byteCount: written)
                    } else {
                        try handler.scalar(.string, text: capturing ? text : [])
                    }
                }
                valueEnded()
            }
        case UInt8(ascii: "\\"):
            try addWritten(1)
            state = .escape
        case 0..<0x20:
            throw fail("a raw control character (0x\(String(byte, radix: 16, uppercase: true))) in a string; JSON requires it escaped")
        default:
            // The lead byte of a multi-byte sequence (Unicode Table 3-7).
            try addWritten(1)
            switch byte {
            case 0xC2...0xDF: utf8Remaining = 1
            case 0xE0:
                utf8Remaining = 2
                utf8Low = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: utf8Remaining = 2
            case 0xED:
                utf8Remaining = 2
                utf8High = 0x9F
            case 0xF0:
                utf8Remaining = 3
                utf8Low = 0x90
            case 0xF1...0xF3: utf8Remaining = 3
            case 0xF4:
                utf8Remaining = 3
                utf8High = 0x8F
            default: throw fail("byte 0x\(String(byte, radix: 16, uppercase: true)) is not UTF-8 (JSON is UTF-8)")
            }
            if capturing { text.append(byte) }
            state = .utf8Continuation
        }
    }

    private mutating func escapeByte(_ byte: UInt8) throws(TokenError) {
        try addWritten(1)
        if byte == UInt8(ascii: "u") {
            hexDigits = 0
            codeUnit = 0
            highSurrogate = 0
            state = .unicodeEscape
            return
        }
        guard let unescaped = ByteRules.jsonEscapedByte(byte) else {
            throw fail("a backslash followed by \(TransportDecoder.describe(byte)) is not a JSON escape")
        }
        if capturing { text.append(unescaped) }
        state = .string
    }

    private mutating func unicodeEscapeByte(_ byte: UInt8) throws(TokenError) {
        try addWritten(1)
        let digit: UInt32
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
        default: throw fail("'\\u' must be followed by four hex digits")
        }
        codeUnit = codeUnit << 4 | digit
        hexDigits += 1
        guard hexDigits == 4 else { return }
        let unit = codeUnit
        if highSurrogate != 0 {
            guard (0xDC00...0xDFFF).contains(unit) else { throw loneSurrogate() }
            appendScalar(0x10000 + ((highSurrogate - 0xD800) << 10) + (unit - 0xDC00))
            highSurrogate = 0
            state = .string
        } else if (0xD800...0xDBFF).contains(unit) {
            highSurrogate = unit
            state = .lowSurrogateBackslash
        } else if (0xDC00...0xDFFF).contains(unit) {
            throw loneSurrogate()
        } else {
            appendScalar(unit)
            state = .string
        }
    }

    private func loneSurrogate() -> TokenError {
        TokenError(.invalidJSON, stage: .transport, "a '\\u' surrogate escape that is not half of a pair", at: position.location)
    }

    private mutating func appendScalar(_ scalar: UInt32) {
        guard capturing else { return }
        switch scalar {
        case 0..<0x80:
            text.append(UInt8(scalar))
        case 0x80..<0x800:
            text.append(UInt8(0xC0 | scalar >> 6))
            text.append(UInt8(0x80 | scalar & 0x3F))
        case 0x800..<0x10000:
            text.append(UInt8(0xE0 | scalar >> 12))
            text.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            text.append(UInt8(0x80 | scalar & 0x3F))
        default:
            text.append(UInt8(0xF0 | scalar >> 18))
            text.append(UInt8(0x80 | scalar >> 12 & 0x3F))
            text.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            text.append(UInt8(0x80 | scalar & 0x3F))
        }
    }

    // MARK: Numbers and literals

    /// Takes `byte` into the number; false when the number ended before it.
    private mutating func numberByte(_ byte: UInt8, phase: NumberPhase, with handler: inout some JSONEventHandler) throws(TokenError) -> Bool {
        let isDigit = byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
        let next: NumberPhase
        switch phase {
        case .minus:
            guard isDigit else { throw fail("'-' must be followed by a digit") }
            next = byte == UInt8(ascii: "0") ? .zero : .integer
        case .zero, .integer, .fraction:
            if isDigit && phase != .zero {
                next = phase
            } else if isDigit {
                throw fail("a number with a leading zero")
            } else if byte == UInt8(ascii: "."), phase != .fraction {
                next = .dot
            } else if byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
                next = .exponentMark
            } else {
                try endScalar(.number, with: &handler)
                return false
            }
        case .dot:
            guard isDigit else { throw fail("'.' in a number must be followed by a digit") }
            next = .fraction
        case .exponentMark:
            if isDigit {
                next = .exponent
            } else if byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-") {
                next = .exponentSign
            } else {
                throw fail("an exponent without digits")
            }
        case .exponentSign:
            guard isDigit else { throw fail("an exponent without digits") }
            next = .exponent
        case .exponent:
            guard isDigit else {
                try endScalar(.number, with: &handler)
                return false
            }
            next = .exponent
        }
        try addWritten(1)
        if capturing { text.append(byte) }
        state = .number(next)
        return true
    }

    private mutating func endScalar(_ kind: JSONScalar, with handler: inout some JSONEventHandler) throws(TokenError) {
        if skippedDepth == 0 { try handler.scalar(kind, text: capturing && kind == .number ? text : []) }
        valueEnded()
    }

    // MARK: Positions and errors

    @inline(__always) private mutating func advance(by count: Int) {
        position.offset += count
        position.column += count
    }

    private func fail(_ message: String) -> TokenError {
        TokenError(.invalidJSON, stage: .transport, message, at: position.location)
    }
}
