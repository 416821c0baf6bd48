/// One token's worth of input, cut out of a stream.
public struct TokenRecord: Sendable {
    /// 1-based position of the token in the input stream (`input` in docs/DESIGN.md#output-forms).
    public var index: Int
    /// Where the record starts in the stream (a REST v2 decision: at its `{`).
    public var byteOffset: Int
    /// 1-based line of the stream where the record starts (a REST v2 decision: the line of its `{`).
    public var line: Int
    /// The record's bytes as they stood in the input (for REST JSON: the `serializedToken` string).
    public var bytes: [UInt8]
    /// The unsigned REST envelope the record came in (REST JSON input).
    public var envelope: RESTEnvelope?
    /// Set when the record could not even be cut out properly (too large, bad JSON).
    public var error: TokenError?

    /// A record as a splitter cuts it (for tests and callers that cut records themselves).
    public init(index: Int, byteOffset: Int, line: Int, bytes: [UInt8], envelope: RESTEnvelope? = nil, error: TokenError? = nil) {
        self.index = index
        self.byteOffset = byteOffset
        self.line = line
        self.bytes = bytes
        self.envelope = envelope
        self.error = error
    }
}

/// Cuts a stream of bytes into token records, as
/// docs/DESIGN.md#records-in-a-multi-token-input says, holding at most one record in memory (a REST JSON
/// document: its tokens and envelopes, never the rest of it).
///
/// - A UTF-8 byte order mark at the start of the input is skipped.
/// - Input whose first non-blank byte is `{` (or `[`, to refuse it clearly) is
///   one REST JSON document, scanned as it streams in.
/// - Otherwise it is read line by line. A line starting with `<` (after white
///   space) starts a raw XML record, which ends with the line that completes one
///   signature block and one token element. It continues onto the next line only
///   while markup is open (an element, a CDATA section, the signature block, a
///   tag), or while it still lacks a part and the next line starts with `<`. A
///   line beginning `<signatureInfo` or `<?xml` while no markup is open starts a
///   new record (inside open markup it is content), except that a record holding
///   only an XML declaration goes on into the `<signatureInfo` line after it.
///   A raw record that has failed (its framing found an error, its element is
///   none of the token roots, or it outgrew ``DecoderConfiguration/maxTokenBytes``)
///   ends with its line, so a broken record never takes the records after it with it.
/// - A line starting with `{` or `[` is a one-line REST JSON document.
///   Any other non-blank line is one encoded token, except Base64 wrapped
///   over several lines (as `base64` writes it): a line of 60 to 256 Base64
///   characters that does not decode to a whole token starts a run, and each
///   next line of Base64 as long (or, to end it, shorter) continues it while
///   what was joined does not yet decode to a whole token. Token lines are
///   longer than 256 characters, so a file of one token per line is never
///   joined. Blank lines are skipped.
///
/// Raw records keep their line breaks byte for byte, because a token
/// pretty-printed over several lines is signed with those bytes.
public struct RecordSplitter: Sendable {
    /// The limits records are cut with.
    public let configuration: DecoderConfiguration

    private enum Mode { case undetermined, lines, json }
    private var mode = Mode.undetermined
    /// Bytes of a UTF-8 byte order mark matched at the start of the input, until it is decided.
    private var byteOrderMarkMatched = 0
    private var byteOrderMarkDecided = false

    /// The current line, until its `\n` arrives.
    private var line: [UInt8] = []
    private var lineOverflow = false
    private var lineStartOffset = 0
    private var lineNumber = 1

    /// The raw XML record in progress.
    private var raw: [UInt8] = []
    private var rawActive = false
    private var rawOverflow = false
    private var rawOffset = 0
    private var rawLine = 0
    private var scanner = FrameScanner()

    /// The REST JSON document the whole input is, once it started.
    private var document: RESTDocument?
    private var documentStart = JSONPosition(offset: 0, line: 1, column: 1)
    private var documentBytes = 0
    private var documentOverflow = false

    /// A run of wrapped Base64 lines, joined by `\n` as they stood.
    private var wrapped: [UInt8] = []
    private var wrapActive = false
    private var wrapWidth = 0
    private var wrapOffset = 0
    private var wrapLine = 0
    /// What the run's whole lines decode to, and its frame so far: a run ends
    /// once it holds a whole token, even if its last line is full width.
    private var wrapDecoded: [UInt8] = []
    private var wrapScanner = FrameScanner()

    private var consumed = 0
    private var nextIndex = 1

    /// A splitter at the start of a stream.
    public init(configuration: DecoderConfiguration = .default) {
        self.configuration = configuration
    }

    /// Bytes the splitter holds on to between calls: what "flat memory" is measured by.
    var retainedBytes: Int { line.capacity + raw.capacity + (document?.retainedBytes ?? 0) + wrapped.capacity + wrapDecoded.capacity }

    /// Feeds the next chunk; returns the records it completed, in order.
    ///
    /// An array or array slice is read in place; other collections are copied once.
    @inlinable
    public mutating func feed(_ bytes: some Collection<UInt8>) -> [TokenRecord] {
        if let array = bytes as? [UInt8] { return feed(array.span) }
        if let slice = bytes as? ArraySlice<UInt8> { return feed(slice.span) }
        let copy = Array(bytes)
        return feed(copy.span)
    }

    /// Feeds the next chunk, read in place; returns the records it completed, in order.
    public mutating func feed(_ bytes: Span<UInt8>) -> [TokenRecord] {
        var records: [TokenRecord] = []
        feed(bytes, each: { records.append($0) })
        return records
    }

    /// Feeds the next chunk, read in place, handing each record to `body` as
    /// it is cut: however many records the chunk holds, none waits for the
    /// others (docs/DESIGN.md#inputs-and-streaming).
    public mutating func feed(_ bytes: Span<UInt8>, each body: (TokenRecord) -> Void) {
        feedSkippingByteOrderMark(bytes, into: body)
    }

    /// Ends the stream; returns the records still open.
    public mutating func finish() -> [TokenRecord] {
        var records: [TokenRecord] = []
        finish(each: { records.append($0) })
        return records
    }

    /// Ends the stream, handing each record still open to `body`.
    public mutating func finish(each records: (TokenRecord) -> Void) {
        if !byteOrderMarkDecided {
            // A prefix of a byte order mark and then the end: those bytes are input.
            byteOrderMarkDecided = true
            let mark = ByteRules.byteOrderMark
            feed(mark.span.extracting(..<byteOrderMarkMatched), into: records)
        }
        switch mode {
        case .undetermined:
            break
        case .json:
            emitDocument(into: records)
        case .lines:
            if !line.isEmpty || lineOverflow { endLine(terminator: 0, into: records) }
            if rawActive { emitRaw(into: records) }
            if wrapActive { emitWrapped(into: records) }
        }
    }

    private mutating func feedSkippingByteOrderMark(_ buffer: Span<UInt8>, into records: (TokenRecord) -> Void) {
        guard !byteOrderMarkDecided else { return feed(buffer, into: records) }
        var index = 0
        while index < buffer.count, byteOrderMarkMatched < 3 {
            guard buffer[index] == ByteRules.byteOrderMark[byteOrderMarkMatched] else {
                // Not a byte order mark: what matched so far is input after all.
                byteOrderMarkDecided = true
                let mark = ByteRules.byteOrderMark
                feed(mark.span.extracting(..<byteOrderMarkMatched), into: records)
                return feed(buffer.extracting(index...), into: records)
            }
            byteOrderMarkMatched += 1
            index += 1
        }
        guard byteOrderMarkMatched == 3 else { return }  // the chunk ended inside a possible mark
        byteOrderMarkDecided = true
        consumed += 3
        lineStartOffset = 0
        feed(buffer.extracting(index...), into: records)
    }

    private mutating func feed(_ buffer: Span<UInt8>, into records: (TokenRecord) -> Void) {
        var start = 0
        if mode == .undetermined {
            while start < buffer.count, buffer[start].isASCIIWhitespace {
                consumed += 1
                if buffer[start] == UInt8(ascii: "\n") {
                    lineNumber += 1
                    lineStartOffset = consumed
                }
                start += 1
            }
            guard start < buffer.count else { return }
            if buffer[start] == UInt8(ascii: "{") || buffer[start] == UInt8(ascii: "[") {
                mode = .json
                documentStart = JSONPosition(offset: consumed, line: lineNumber, column: consumed - lineStartOffset + 1)
                document = RESTDocument(configuration: configuration, startingAt: documentStart)
            } else {
                mode = .lines
                lineStartOffset = consumed
            }
        }
        if mode == .json {
            feedDocument(buffer.extracting(start...))
            return
        }
        while start < buffer.count {
            let newline = ByteSearch.firstIndex(of: UInt8(ascii: "\n"), in: buffer, from: start)
            let end = newline ?? buffer.count
            if !lineOverflow {
                if line.count + (end - start) > configuration.maxRecordBytes {
                    lineOverflow = true
                    line = []
                } else {
                    line.append(copying: buffer.extracting(start..<end))
                }
            }
            consumed += end - start
            guard newline != nil else { return }
            consumed += 1
            endLine(terminator: UInt8(ascii: "\n"), into: records)
            start = end + 1
        }
    }

    private mutating func feedDocument(_ chunk: Span<UInt8>) {
        consumed += chunk.count
        documentBytes += chunk.count
        guard !documentOverflow else { return }
        if documentBytes > configuration.maxJSONDocumentBytes {
            // Past the limit nothing more is read: the document is refused whole.
            documentOverflow = true
            document = nil
            return
        }
        guard document?.hasFailed == false else { return }
        document?.feed(chunk)
    }

    private static let signatureInfoPrefix = Array("<signatureInfo".utf8)
    private static let declarationPrefix = Array("<?xml".utf8)

    /// Handles the complete line in `line`; `terminator` is `\n`, or 0 at the end of input.
    private mutating func endLine(terminator: UInt8, into records: (TokenRecord) -> Void) {
        defer {
            line.removeAll(keepingCapacity: line.capacity <= 64 * 1024)
            lineOverflow = false
            lineNumber += 1
            lineStartOffset = consumed
        }
        if wrapActive {
            let next = lineOverflow ? .isNotPart : wrappedContinuation()
            if next != .continues { emitWrapped(into: records) }
            if next != .isNotPart { return }
        }
        let firstNonBlank = line.firstIndex { !$0.isASCIIWhitespace }
        if rawActive && !lineOverflow {
            if continuesRaw(firstNonBlank: firstNonBlank) {
                appendToRaw(terminator: terminator, into: records)
                return
            }
            emitRaw(into: records)
        }
        if rawActive { emitRaw(into: records) }
        if lineOverflow {
            records(
                record(
                    bytes: [],
                    offset: lineStartOffset,
                    line: lineNumber,
                    error: TokenError(
                        .inputTooLarge,
                        stage: .transport,
                        "line is longer than \(configuration.maxRecordBytes) bytes (maxRecordBytes); no token is that long"
                    )
                )
            )
            return
        }
        guard let firstNonBlank else { return }
        switch line[firstNonBlank] {
        case UInt8(ascii: "<"):
            rawActive = true
            rawOverflow = false
            rawOffset = lineStartOffset
            rawLine = lineNumber
            scanner = FrameScanner()
            raw.removeAll(keepingCapacity: true)
            appendToRaw(terminator: terminator, into: records)
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            let start = JSONPosition(offset: lineStartOffset, line: lineNumber, column: 1)
            for entry in RESTDocument.entries(from: line, configuration: configuration, startingAt: start) {
                records(record(entry))
            }
        default:
            var bytes = line
            if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
            if startWrapped(bytes) { return }
            records(record(bytes: bytes, offset: lineStartOffset, line: lineNumber))
        }
    }

    /// Whether the line in `line` belongs to the raw record in progress (docs/DESIGN.md#records-in-a-multi-token-input).
    private func continuesRaw(firstNonBlank: Int?) -> Bool {
        if scanner.isMarkupOpen { return true }
        guard let firstNonBlank, line[firstNonBlank] == UInt8(ascii: "<") else { return false }
        if line.starts(with: Self.signatureInfoPrefix) {
            // `<?xml …?>` on a line of its own above a token is how pretty-printed
            // tokens look; nothing could be lost by going on.
            return scanner.sawOnlyDeclaration
        }
        return !line.starts(with: Self.declarationPrefix)
    }

    /// Widths a wrapped Base64 line may have: `base64` writes 76, PEM 64.
    /// A whole token is longer than the upper bound, so a file of one token
    /// per line never starts a run.
    static let wrapWidths = 60...256

    /// Starts a run of wrapped Base64 with `bytes`, if it may be its first line.
    private mutating func startWrapped(_ line: [UInt8]) -> Bool {
        var bytes = line
        // A UTF-8 BOM at the start of the input is skipped (docs/DESIGN.md#records-in-a-multi-token-input), also before wrapped Base64.
        if nextIndex == 1, ByteRules.startsWithByteOrderMark(bytes) { bytes.removeFirst(ByteRules.byteOrderMarkCount) }
        guard Self.wrapWidths.contains(bytes.count), bytes.allSatisfy(Base64.isAlphabetOrPadding) else { return false }
        wrapActive = true
        wrapWidth = bytes.count
        wrapOffset = lineStartOffset
        wrapLine = lineNumber
        wrapped = bytes
        wrapDecoded.removeAll(keepingCapacity: true)
        wrapScanner = FrameScanner()
        if absorbWrappedLine(bytes) {
            // It decodes to a whole token by itself: one line, one record.
            wrapActive = false
            return false
        }
        return true
    }

    private enum WrappedContinuation { case continues, isLast, isNotPart }

    /// Adds the current line to the run if it is part of it.
    private mutating func wrappedContinuation() -> WrappedContinuation {
        var bytes = line[...]
        if bytes.last == UInt8(ascii: "\r") { bytes = bytes.dropLast() }
        guard !bytes.isEmpty, bytes.count <= wrapWidth, bytes.allSatisfy(Base64.isAlphabetOrPadding),
            wrapped.count + 1 + bytes.count <= configuration.maxRecordBytes
        else { return .isNotPart }
        wrapped.append(UInt8(ascii: "\n"))
        wrapped.append(contentsOf: bytes)
        // A shorter line is the last; a full one is the last when the token is whole.
        return bytes.count < wrapWidth || absorbWrappedLine(Array(bytes)) ? .isLast : .continues
    }

    /// Decodes one full-width line into the run's frame; true once it holds a whole token.
    /// Lines whose width is not a multiple of 4 do not decode on their own: such a
    /// run ends only at a shorter line or a line that is not Base64.
    private mutating func absorbWrappedLine(_ bytes: [UInt8]) -> Bool {
        guard wrapWidth % 4 == 0, let decoded = try? Base64.decode(bytes, whitespace: .lineBreaks) else { return false }
        wrapDecoded.append(contentsOf: decoded.bytes)
        let soFar = wrapDecoded
        wrapScanner.scan(soFar.span)
        return wrapScanner.isComplete
    }

    private mutating func emitWrapped(into records: (TokenRecord) -> Void) {
        wrapActive = false
        records(record(bytes: wrapped, offset: wrapOffset, line: wrapLine))
        wrapped.removeAll(keepingCapacity: wrapped.capacity <= 64 * 1024)
        wrapDecoded.removeAll(keepingCapacity: wrapDecoded.capacity <= 64 * 1024)
    }

    private mutating func appendToRaw(terminator: UInt8, into records: (TokenRecord) -> Void) {
        if !rawOverflow {
            if raw.count + line.count + 1 > configuration.maxTokenBytes {
                // Too large to be a token: it has failed, and ends with this line.
                rawOverflow = true
                raw = []
                return emitRaw(into: records)
            }
            raw.append(contentsOf: line)
            // The line break goes in now: the scanner must see that the line
            // ended (a `<` at its end starts no markup).
            if terminator != 0 { raw.append(terminator) }
            let bytes = raw
            scanner.scan(bytes.span)
        }
        // A record that has failed ends with its line: its framing found an error, or
        // its element is no token (the parser refuses it), so nothing after it can mend it.
        if scanner.isComplete || scanner.firstError != nil || scanner.tokenElementHasUnknownName { emitRaw(into: records) }
    }

    private mutating func emitRaw(into records: (TokenRecord) -> Void) {
        rawActive = false
        if rawOverflow {
            records(
                record(
                    bytes: [],
                    offset: rawOffset,
                    line: rawLine,
                    error: TokenError(
                        .tokenTooLarge,
                        stage: .transport,
                        "raw XML record is longer than \(configuration.maxTokenBytes) bytes (maxTokenBytes) without completing a token"
                    )
                )
            )
        } else {
            // The last line's break is not part of the record.
            if raw.last == UInt8(ascii: "\n") { raw.removeLast() }
            records(record(bytes: raw, offset: rawOffset, line: rawLine))
        }
        raw.removeAll(keepingCapacity: raw.capacity <= 64 * 1024)
        rawOverflow = false
    }

    private mutating func emitDocument(into records: (TokenRecord) -> Void) {
        defer { document = nil }
        if documentOverflow {
            records(
                record(
                    bytes: [],
                    offset: documentStart.offset,
                    line: documentStart.line,
                    error: TokenError(
                        .inputTooLarge,
                        stage: .transport,
                        "the REST JSON document is larger than \(configuration.maxJSONDocumentBytes) bytes (maxJSONDocumentBytes)",
                        at: SourceLocation(byteOffset: documentStart.offset + configuration.maxJSONDocumentBytes)
                    )
                )
            )
            return
        }
        guard var document else { return }
        for entry in document.finish() {
            records(record(entry))
        }
    }

    private mutating func record(_ entry: RESTDocument.Entry) -> TokenRecord {
        record(bytes: entry.token ?? [], offset: entry.position.offset, line: entry.position.line, envelope: entry.envelope, error: entry.error)
    }

    private mutating func record(bytes: [UInt8], offset: Int, line: Int, envelope: RESTEnvelope? = nil, error: TokenError? = nil) -> TokenRecord {
        defer { nextIndex += 1 }
        return TokenRecord(index: nextIndex, byteOffset: offset, line: line, bytes: bytes, envelope: envelope, error: error)
    }
}
