/// An incremental RESP2 reply decoder: ``feed(_:)`` bytes as they arrive,
/// then call ``next()`` until it returns nil (more bytes needed).
///
/// A resumable state machine, not a re-parse from the reply's start: every
/// byte is scanned once however the stream is cut, so the cost is linear in
/// the input and the replies (or the error) are the same whether the bytes
/// come whole, one at a time or split anywhere (the fuzz oracle). The first
/// error is final: the stream has lost its framing, and every later call
/// throws it again.
public struct RESPDecoder: Sendable {
    public let limits: RESPLimits

    /// Bytes fed and not yet consumed start at `readIndex`.
    private var buffer: [UInt8] = []
    private var readIndex = 0
    /// Stream offset of `buffer[0]`.
    private var bufferStartOffset = 0
    /// Where the search for the current line's CR resumes.
    private var scanIndex = 0
    /// Payload length of a bulk string whose length line has been read.
    private var awaitedBulkLength: Int?
    /// Arrays whose elements are still arriving, outermost first.
    private var openArrays: [OpenArray] = []
    /// Stream offset of the first byte of the reply being decoded.
    private var replyStartOffset = 0
    private var failure: RESPError?

    private struct OpenArray: Sendable {
        var remaining: Int
        var elements: [RESPReply]
    }

    public init(limits: RESPLimits = .default) {
        self.limits = limits
    }

    /// Bytes fed that are not yet part of a returned reply.
    public var bufferedByteCount: Int { buffer.count - readIndex }

    /// Whether no reply has been started and not finished (the stream could end here).
    public var isAtReplyBoundary: Bool {
        bufferedByteCount == 0 && openArrays.isEmpty && awaitedBulkLength == nil
    }

    public mutating func feed(_ bytes: some Sequence<UInt8>) {
        if readIndex > 0, readIndex >= buffer.count / 2 {
            // Consumed bytes go once they are at least half the buffer: each
            // byte is moved a bounded number of times (amortised linear).
            buffer.removeSubrange(0..<readIndex)
            bufferStartOffset += readIndex
            scanIndex -= readIndex
            readIndex = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next complete reply, or nil until more bytes are fed.
    public mutating func next() throws(RESPError) -> RESPReply? {
        if let failure { throw failure }
        do {
            return try decodeNext()
        } catch {
            failure = error
            throw error
        }
    }

    private func offset(_ index: Int) -> Int { bufferStartOffset + index }

    private mutating func decodeNext() throws(RESPError) -> RESPReply? {
        while true {
            guard let item = try decodeItem() else { return nil }
            guard var value = item else { continue }  // an array or bulk string opened
            // A finished value completes its array, which may complete the enclosing one.
            while !openArrays.isEmpty {
                let last = openArrays.count - 1
                openArrays[last].elements.append(value)
                openArrays[last].remaining -= 1
                guard openArrays[last].remaining == 0 else { break }
                value = .array(openArrays.removeLast().elements)
            }
            if openArrays.isEmpty { return value }
        }
    }

    /// nil: more bytes needed. `.some(nil)`: a header was read, its value is still open.
    private mutating func decodeItem() throws(RESPError) -> RESPReply?? {
        if let length = awaitedBulkLength {
            guard buffer.count - readIndex >= length + 2 else { return nil }
            let end = readIndex + length
            guard buffer[end] == RESPSyntax.carriageReturn, buffer[end + 1] == RESPSyntax.lineFeed else {
                throw RESPError(
                    .missingBulkTerminator,
                    offset: offset(end),
                    "a bulk string of \(length) bytes is not followed by CR LF"
                )
            }
            let payload = Array(buffer[readIndex..<end])
            readIndex = end + 2
            scanIndex = readIndex
            awaitedBulkLength = nil
            return .some(.bulkString(payload))
        }

        guard let lineEnd = try findLineEnd() else { return nil }
        let lineStart = readIndex
        let itemOffset = offset(lineStart)
        if openArrays.isEmpty { replyStartOffset = itemOffset }
        readIndex = lineEnd + 2
        scanIndex = readIndex
        guard lineEnd > lineStart else {
            throw RESPError(.invalidTypeByte, offset: itemOffset, "an empty line where a reply was expected")
        }
        let content = buffer[(lineStart + 1)..<lineEnd]

        switch buffer[lineStart] {
        case UInt8(ascii: "+"):
            try checkReplySize(pending: 0)
            return .some(.simpleString(Array(content)))
        case UInt8(ascii: "-"):
            try checkReplySize(pending: 0)
            return .some(.error(Array(content)))
        case UInt8(ascii: ":"):
            let value = try Self.integer(content, offset: itemOffset)
            try checkReplySize(pending: 0)
            return .some(.integer(value))
        case UInt8(ascii: "$"):
            let length = try Self.integer(content, offset: itemOffset)
            if length == -1 {
                try checkReplySize(pending: 0)
                return .some(.null)
            }
            guard length >= 0 else {
                throw RESPError(.malformedInteger, offset: itemOffset, "a bulk string's length is \(length)")
            }
            guard length <= limits.maxBulkBytes else {
                throw RESPError(
                    .bulkTooLong,
                    offset: itemOffset,
                    "a bulk string of \(length) bytes (limit \(limits.maxBulkBytes))"
                )
            }
            try checkReplySize(pending: Int(length) + 2)
            awaitedBulkLength = Int(length)
            return .some(nil)
        case UInt8(ascii: "*"):
            let count = try Self.integer(content, offset: itemOffset)
            guard openArrays.count < limits.maxNestingDepth else {
                throw RESPError(
                    .nestingTooDeep,
                    offset: itemOffset,
                    "arrays nested more than \(limits.maxNestingDepth) deep"
                )
            }
            if count == -1 {
                try checkReplySize(pending: 0)
                return .some(.null)
            }
            guard count >= 0 else {
                throw RESPError(.malformedInteger, offset: itemOffset, "an array's length is \(count)")
            }
            guard count <= limits.maxArrayCount else {
                throw RESPError(
                    .arrayTooLong,
                    offset: itemOffset,
                    "an array of \(count) elements (limit \(limits.maxArrayCount))"
                )
            }
            try checkReplySize(pending: 0)
            if count == 0 { return .some(.array([])) }
            var elements: [RESPReply] = []
            elements.reserveCapacity(min(Int(count), 16))
            openArrays.append(OpenArray(remaining: Int(count), elements: elements))
            return .some(nil)
        case UInt8(ascii: "_"), UInt8(ascii: ","), UInt8(ascii: "#"), UInt8(ascii: "!"), UInt8(ascii: "="),
            UInt8(ascii: "("), UInt8(ascii: "%"), UInt8(ascii: "~"), UInt8(ascii: ">"), UInt8(ascii: "|"):
            throw RESPError(
                .unsupportedType,
                offset: itemOffset,
                "RESP3 type '\(Character(Unicode.Scalar(buffer[lineStart])))' on a RESP2 connection"
            )
        case let byte:
            throw RESPError(.invalidTypeByte, offset: itemOffset, "0x\(String(byte, radix: 16)) is not a RESP type")
        }
    }

    /// The index of the CR ending the line at `readIndex`, or nil until it has arrived.
    private mutating func findLineEnd() throws(RESPError) -> Int? {
        let lastAllowed = readIndex + limits.maxLineBytes  // where the CR may be, at the latest
        var index = scanIndex
        while index < buffer.count, index <= lastAllowed {
            switch buffer[index] {
            case RESPSyntax.carriageReturn:
                guard index + 1 < buffer.count else {
                    scanIndex = index
                    return nil
                }
                guard buffer[index + 1] == RESPSyntax.lineFeed else {
                    throw RESPError(.malformedLineEnd, offset: offset(index), "a CR not followed by LF")
                }
                return index
            case RESPSyntax.lineFeed:
                throw RESPError(.bareLineFeed, offset: offset(index), "an LF with no CR before it")
            default:
                index += 1
            }
        }
        if index > lastAllowed {
            throw RESPError(
                .lineTooLong,
                offset: offset(readIndex),
                "a line longer than \(limits.maxLineBytes) bytes"
            )
        }
        scanIndex = index
        return nil
    }

    /// Throws when the reply, counting `pending` bytes announced but not yet read, outgrows the limit.
    private func checkReplySize(pending: Int) throws(RESPError) {
        let size = offset(readIndex) + pending - replyStartOffset
        if size > limits.maxReplyBytes {
            throw RESPError(
                .replyTooLarge,
                offset: replyStartOffset,
                "a reply longer than \(limits.maxReplyBytes) bytes"
            )
        }
    }

    /// `-?[0-9]+` in 64 bits.
    private static func integer(_ digits: ArraySlice<UInt8>, offset: Int) throws(RESPError) -> Int64 {
        var index = digits.startIndex
        let negative = index < digits.endIndex && digits[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        guard index < digits.endIndex else {
            throw RESPError(.malformedInteger, offset: offset, "an integer with no digits")
        }
        var value: Int64 = 0
        while index < digits.endIndex {
            let digit = digits[index] &- UInt8(ascii: "0")
            guard digit < 10 else {
                throw RESPError(.malformedInteger, offset: offset, "an integer holds a byte that is not a digit")
            }
            // Accumulate negatively so Int64.min fits.
            let (shifted, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (next, overflow2) = shifted.subtractingReportingOverflow(Int64(digit))
            guard !overflow1, !overflow2 else {
                throw RESPError(.malformedInteger, offset: offset, "an integer that does not fit in 64 bits")
            }
            value = next
            index += 1
        }
        if negative { return value }
        guard value != .min else {
            throw RESPError(.malformedInteger, offset: offset, "an integer that does not fit in 64 bits")
        }
        return -value
    }
}
