import Foundation
import Testing

@testable import EntitlementTokens

/// The one home of each byte rule (issue 12): hex, BOM, whitespace, root names.
@Suite struct ByteRulesTests {
    @Test func hexDigitsRoundTripEveryByte() {
        for byte in UInt8.min...UInt8.max {
            let text = ByteRules.lowercaseHex([byte])
            #expect(text == String(format: "%02x", byte))
            let digits = Array(text.utf8)
            #expect(ByteRules.hexValue(digits[0]).map { $0 << 4 | ByteRules.hexValue(digits[1])! } == byte)
            #expect(ByteRules.hexValue(Array(text.uppercased().utf8)[1]) == byte & 0x0F)
        }
    }

    @Test func hexValueRefusesEveryOtherByte() {
        let digits = Set("0123456789abcdefABCDEF".utf8)
        for byte in UInt8.min...UInt8.max where !digits.contains(byte) {
            #expect(ByteRules.hexValue(byte) == nil, "byte \(byte)")
        }
    }

    @Test func byteOrderMarkIsEFBBBFAtTheStartOnly() {
        let marked: [UInt8] = [0xEF, 0xBB, 0xBF, 0x3C]
        #expect(marked.withSpan { ByteRules.startsWithByteOrderMark($0) })
        #expect(ByteRules.startsWithByteOrderMark(marked[...]))
        #expect(![UInt8]([0xEF, 0xBB]).withSpan { ByteRules.startsWithByteOrderMark($0) })
        #expect(![UInt8]([0x20, 0xEF, 0xBB, 0xBF]).withSpan { ByteRules.startsWithByteOrderMark($0) })
        #expect(!ByteRules.startsWithByteOrderMark([0xEF, 0xBB, 0xBE]))
    }

    @Test func whitespaceIsTheFourXMLAndJSONBytes() {
        let whitespace = (UInt8.min...UInt8.max).filter(\.isASCIIWhitespace)
        #expect(whitespace == [0x09, 0x0A, 0x0D, 0x20])
        #expect([UInt8](" \t\r\n".utf8).withSpan { ByteRules.isBlank($0) })
        #expect([UInt8]().withSpan { ByteRules.isBlank($0) })
        #expect(![UInt8](" \u{0B} ".utf8).withSpan { ByteRules.isBlank($0) })
    }

    @Test func rootNamesAreTheModelsRootNames() {
        #expect(Set(ByteRules.tokenRoots) == Set(MediaToken.Root.allCases.map(\.rawValue) + [AuthenticationToken.root, AuthorizationToken.root]))
        for name in ByteRules.tokenRoots {
            #expect(Array(name.utf8).withSpan { ByteRules.isTokenRoot($0) }, "\(name)")
            #expect(!Array((name + "x").utf8).withSpan { ByteRules.isTokenRoot($0) })
            #expect(!Array(name.utf8.dropLast()).withSpan { ByteRules.isTokenRoot($0) })
            #expect(!Array(name.uppercased().utf8).withSpan { ByteRules.isTokenRoot($0) })
        }
        #expect(Array("signatureInfo".utf8).withSpan { ByteRules.isSignatureInfo($0) })
        #expect(!Array("signatureinfo".utf8).withSpan { ByteRules.isSignatureInfo($0) })
        #expect(MediaToken.Root(rawValue: "authToken") == .authToken)
        #expect(MediaToken.Root(rawValue: "shortAuthorizationToken") == .shortAuthorizationToken)
        #expect(MediaToken.Root(rawValue: "simpleAuthorizationToken") == nil)
    }
}

/// The byte-scanning toolkit over `Span`.
@Suite struct ByteSearchTests {
    @Test func firstIndexOfAByteHonoursTheStart() {
        let bytes = Array("a<b<c".utf8)
        bytes.withSpan { span in
            #expect(ByteSearch.firstIndex(of: UInt8(ascii: "<"), in: span) == 1)
            #expect(ByteSearch.firstIndex(of: UInt8(ascii: "<"), in: span, from: 2) == 3)
            #expect(ByteSearch.firstIndex(of: UInt8(ascii: "<"), in: span, from: 4) == nil)
            #expect(ByteSearch.firstIndex(of: UInt8(ascii: "<"), in: span, from: 5) == nil)
            #expect(ByteSearch.firstIndex(of: UInt8(ascii: "<"), in: span, from: 99) == nil)
            #expect(ByteSearch.firstIndex(of: UInt8(ascii: "z"), in: span) == nil)
        }
        [UInt8]().withSpan { #expect(ByteSearch.firstIndex(of: 0, in: $0) == nil) }
    }

    @Test func firstIndexOfANeedle() {
        Array("--->-->".utf8).withSpan { span in
            #expect(ByteSearch.firstIndex(of: "-->", in: span) == 1)
            #expect(ByteSearch.firstIndex(of: "-->", in: span, from: 2) == 4)
            #expect(ByteSearch.firstIndex(of: "-->", in: span, from: 5) == nil)
            #expect(ByteSearch.firstIndex(of: "]]>", in: span) == nil)
        }
    }

    @Test func matchesSaysWhenTheBytesEndFirst() {
        Array("<!DOC".utf8).withSpan { span in
            #expect(ByteSearch.matches("<!DOCTYPE", in: span, at: 0) == nil)
            #expect(ByteSearch.matches("<!DA", in: span, at: 0) == false)
            #expect(ByteSearch.matches("!DO", in: span, at: 1) == true)
            #expect(ByteSearch.matches("x", in: span, at: 5) == nil)
        }
    }

    @Test func equalityIsByteExact() {
        let composed = Array("Café".utf8)
        let decomposed = Array("Cafe\u{301}".utf8)
        composed.withSpan { left in
            let sameText = ByteSearch.bytes(left, equalUTF8Of: "Café")
            let otherForm = ByteSearch.bytes(left, equalUTF8Of: "Cafe\u{301}")
            let otherBytes = decomposed.withSpan { right in ByteSearch.bytes(left, equal: right) }
            let sameBytes = composed.withSpan { same in ByteSearch.bytes(left, equal: same) }
            #expect(sameText && sameBytes)
            #expect(!otherForm && !otherBytes)
        }
        let (equal, unequal) = Array("ab".utf8).withSpan { (ByteSearch.bytes($0, equal: "ab"), ByteSearch.bytes($0, equal: "ac")) }
        #expect(equal && !unequal)
    }
}

/// The library's one growable byte buffer.
@Suite struct GrowableBytesTests {
    @Test func appendsGrowAndKeepEveryByte() {
        var buffer = GrowableBytes(capacity: 1)  // grows many times
        var expected: [UInt8] = []
        for round in 0..<300 {
            let byte = UInt8(truncatingIfNeeded: round)
            buffer.append(byte)
            expected.append(byte)
            let chunk = [UInt8](repeating: byte, count: round % 7)
            chunk.withSpan { buffer.append($0) }
            expected += chunk
        }
        buffer.append("tail")
        expected += Array("tail".utf8)
        #expect(buffer.array == expected)
        #expect(buffer.count == expected.count)
        #expect(buffer.withSpan { $0.count } == expected.count)
    }

    @Test func truncateAndRemoveAllOnlyMoveTheEnd() {
        var buffer = GrowableBytes()
        buffer.append("a/b/c")
        buffer.truncate(to: 3)
        #expect(buffer.string == "a/b")
        buffer.truncate(to: 10)
        #expect(buffer.string == "a/b")
        buffer.append("/d")
        #expect(buffer.string == "a/b/d")
        buffer.removeAll()
        #expect(buffer.isEmpty && buffer.string.isEmpty)
    }

    @Test func appendCopyRepeatsEarlierBytesAcrossAGrowth() {
        var buffer = GrowableBytes(capacity: 16)
        buffer.append("0123456789abcdef")  // full: the copy must grow first
        buffer.appendCopy(of: 2..<12)
        #expect(buffer.string == "0123456789abcdef23456789ab")
    }

    @Test func appendInPlaceKeepsWhatTheWriterCounts() {
        var buffer = GrowableBytes(capacity: 16)
        buffer.append("x")
        buffer.appendInPlace(maximumCount: 100) { out in
            out[0] = UInt8(ascii: "y")
            out[1] = UInt8(ascii: "z")
            return 2
        }
        #expect(buffer.string == "xyz")
    }
}

/// The wrappers of the C library.
@Suite struct LibCTests {
    /// A new directory under the temporary one; the test removes it.
    static func makeDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("libc-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    @Test func fileKindsAndReading() throws {
        let directory = try Self.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("key.pem")
        try Data("key bytes".utf8).write(to: file)

        #expect(try LibC.fileKind(atPath: Array(file.path.utf8CString)) == .regular)
        #expect(try LibC.fileKind(atPath: Array(directory.path.utf8CString)) == .directory)
        #expect(try LibC.readRegularFile(atPath: Array(file.path.utf8CString), byteLimit: 100) == .bytes(Array("key bytes".utf8)))
        #expect(try LibC.readRegularFile(atPath: Array(file.path.utf8CString), byteLimit: 8) == .tooLarge)
        #expect(try LibC.readRegularFile(atPath: Array(directory.path.utf8CString), byteLimit: 8) == .notRegular(.directory))
        #expect(try LibC.fileKind(atPath: Array("/dev/null".utf8CString)) == .characterDevice)
        let names = try LibC.directoryEntryNames(atPath: directory.path).map { String(decoding: $0.map { UInt8(bitPattern: $0) }, as: UTF8.self) }
        #expect(Set(names) == [".", "..", "key.pem"])

        let missing = Array(directory.appendingPathComponent("missing").path.utf8CString)
        #expect(throws: LibC.SystemError(number: ENOENT)) { try LibC.fileKind(atPath: missing) }
        #expect(LibC.SystemError(number: ENOENT).text == String(cString: strerror(ENOENT)))
    }

    /// `status(atPath:)` against all of Foundation's `attributesOfItem`, which the gate used
    /// before it linked FoundationEssentials only.
    @Test func statusAgreesWithFoundationsAttributes() throws {
        let directory = try Self.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("secret.key")
        try Data("twelve bytes".utf8).write(to: file)
        for mode in [0o600, 0o640, 0o644, 0o4755] {
            try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: file.path)
            let status = try LibC.status(atPath: file.path)
            let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
            #expect(status.kind == .regular)
            #expect(status.permissions == mode)
            #expect(status.permissions == attributes[.posixPermissions] as? Int)
            #expect(status.size == 12 && status.size == attributes[.size] as? Int)
            #expect(status.groupID == (attributes[.groupOwnerAccountID] as? NSNumber)?.uint32Value)
            let modified = try #require(attributes[.modificationDate] as? Date).timeIntervalSince1970
            #expect(abs(status.modificationTime - modified) < 0.001)
        }
        #expect(try LibC.status(atPath: directory.path).kind == .directory)
        #expect(LibC.effectiveGroupID == getegid())
        #expect(throws: LibC.SystemError(number: ENOENT)) { try LibC.status(atPath: directory.path + "/missing") }
    }

    @Test func realtimeClockIsNearFoundations() {
        let ours = LibC.realtimeMillisecondsSince1970()
        let foundation = Int64(Date().timeIntervalSince1970 * 1000)
        #expect(abs(ours - foundation) < 60_000)  // the same clock, not a timing assertion
    }

    @Test func threadLocalWordIsPerThread() async {
        let word = LibC.ThreadLocalWord()
        #expect(word.value == 0)
        word.set(42)
        #expect(word.value == 42)
        let other = await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: word.value) }.start()
        }
        #expect(other == 0)
        #expect(LibC.onlineProcessorCount >= 1)
    }
}

extension Array where Element == UInt8 {
    /// The bytes as a `Span` for the body (tests only).
    func withSpan<R>(_ body: (Span<UInt8>) -> R) -> R { body(span) }
}
extension ArraySlice where Element == UInt8 {
    func withSpan<R>(_ body: (Span<UInt8>) -> R) -> R { body(span) }
}

/// The splitter's `Span` entry point cuts what its collection entry points cut,
/// wherever the chunks end (a BOM split across chunks, a line across chunks).
@Suite struct RecordSplitterSpanTests {
    private func cut(_ input: [UInt8], chunk: Int, asSpan: Bool) -> [String] {
        var splitter = RecordSplitter()
        var records: [TokenRecord] = []
        var start = 0
        while start < input.count {
            let piece = Array(input[start..<min(input.count, start + chunk)])
            records += asSpan ? splitter.feed(piece.span) : splitter.feed(piece)
            start += chunk
        }
        records += splitter.finish()
        return records.map {
            "\($0.index)@\($0.byteOffset):\($0.line) \(String(decoding: $0.bytes, as: UTF8.self)) \($0.error?.code.rawValue ?? "-")"
        }
    }

    @Test func spanAndArrayFeedsCutTheSameRecords() {
        let input = ByteRules.byteOrderMark + Array("PHRva2VuLz4=\n  dG9rZW4y\r\n\n<x/>\n".utf8)
        let whole = cut(input, chunk: input.count, asSpan: false)
        #expect(whole.count == 3)
        for chunk in 1...7 {
            #expect(cut(input, chunk: chunk, asSpan: true) == whole, "chunk \(chunk)")
            #expect(cut(input, chunk: chunk, asSpan: false) == whole, "chunk \(chunk)")
        }
        // A slice and a non-contiguous collection go through the same path.
        var splitter = RecordSplitter()
        let fromSlice = splitter.feed(input[0...]) + splitter.finish()
        var other = RecordSplitter()
        let fromSequence = other.feed(input.lazy.map { $0 }) + other.finish()
        #expect(fromSlice.map(\.bytes) == fromSequence.map(\.bytes))
        #expect(fromSlice.count == 3)
    }
}
