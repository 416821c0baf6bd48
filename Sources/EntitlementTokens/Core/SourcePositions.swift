/// Source positions in a document: byte offsets and 1-based line:column, for
/// every stage's errors — computed here and only here.
///
/// libxml2 reports line:column with columns counted in characters; the framing
/// scanner and the transport report byte offsets. Errors carry both: a byte
/// offset's line and byte column is ``SourceLocation/init(offset:in:)``; the
/// parser's character columns are turned into byte offsets and back by
/// ``SourcePositions``.
extension SourceLocation {
    /// Computes line and column of `offset` in `bytes` (columns count bytes).
    init(offset: Int, in bytes: Span<UInt8>) {
        var line = 1
        var lineStart = 0
        let end = min(offset, bytes.count)
        var index = 0
        while index < end {
            if bytes[index] == UInt8(ascii: "\n") {
                line += 1
                lineStart = index + 1
            }
            index += 1
        }
        self.init(byteOffset: offset, line: line, column: offset - lineStart + 1)
    }

    init(offset: Int, in bytes: [UInt8]) {
        self.init(offset: offset, in: bytes.span)
    }
}

enum SourcePositions {
    /// The byte offset of `line`:`column` (columns in characters, as libxml2
    /// counts them): lines are found by `\n`, characters by UTF-8 lead bytes.
    static func byteOffset(line: Int, column: Int, in bytes: Span<UInt8>) -> Int {
        var index = 0
        var currentLine = 1
        while currentLine < line, index < bytes.count {
            if bytes[index] == UInt8(ascii: "\n") { currentLine += 1 }
            index += 1
        }
        var remaining = max(0, column - 1)
        while remaining > 0, index < bytes.count, bytes[index] != UInt8(ascii: "\n") {
            index += 1
            while index < bytes.count, bytes[index] & 0xC0 == 0x80 { index += 1 }
            remaining -= 1
        }
        return index
    }

    /// The location of byte `offset`, its column counted in characters, as
    /// libxml2 would report an error there.
    static func characterLocation(ofByte offset: Int, in bytes: Span<UInt8>) -> SourceLocation {
        var line = 1
        var column = 1
        var index = 0
        while index < min(offset, bytes.count) {
            if bytes[index] == UInt8(ascii: "\n") {
                line += 1
                column = 1
            } else if bytes[index] & 0xC0 != 0x80 {
                column += 1
            }
            index += 1
        }
        return SourceLocation(byteOffset: offset, line: line, column: column)
    }
}
