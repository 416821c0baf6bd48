import RedisRESP
import Testing
import TokenTestSupport

/// Decodes `chunks` in order, draining after each; stops at the first error.
func decodeAll(_ chunks: [[UInt8]], limits: RESPLimits = .default) -> (replies: [RESPReply], error: RESPError?) {
    var decoder = RESPDecoder(limits: limits)
    var replies: [RESPReply] = []
    for chunk in chunks {
        decoder.feed(chunk)
        do {
            while let reply = try decoder.next() { replies.append(reply) }
        } catch {
            return (replies, error)
        }
    }
    return (replies, nil)
}

private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

@Suite("RESP: reply decoder")
struct RESPDecoderTests {
    static let wellFormed: [(String, [RESPReply])] = [
        ("+OK\r\n", [.simpleString(bytes("OK"))]),
        ("+\r\n", [.simpleString([])]),
        (
            "-OOM command not allowed when used memory > 'maxmemory'.\r\n",
            [.error(bytes("OOM command not allowed when used memory > 'maxmemory'."))]
        ),
        (
            ":0\r\n:-42\r\n:9223372036854775807\r\n:-9223372036854775808\r\n",
            [.integer(0), .integer(-42), .integer(.max), .integer(.min)]
        ),
        ("$3\r\nabc\r\n$0\r\n\r\n", [.bulkString(bytes("abc")), .bulkString([])]),
        ("$4\r\n\r\n\r\n\r\n", [.bulkString(bytes("\r\n\r\n"))]),
        ("$-1\r\n*-1\r\n", [.null, .null]),
        ("*0\r\n", [.array([])]),
        (
            "*3\r\n:1\r\n*2\r\n$1\r\nx\r\n*0\r\n+PONG\r\n:2\r\n",
            [.array([.integer(1), .array([.bulkString(bytes("x")), .array([])]), .simpleString(bytes("PONG"))]), .integer(2)]
        ),
        ("*2\r\n$-1\r\n-ERR x\r\n", [.array([.null, .error(bytes("ERR x"))])]),
    ]

    static let malformed: [(String, RESPError.Code, offset: Int, repliesBefore: Int)] = [
        ("?x\r\n", .invalidTypeByte, 0, 0),
        ("+OK\r\n\r\n", .invalidTypeByte, 5, 1),
        ("_\r\n", .unsupportedType, 0, 0),
        ("%1\r\n", .unsupportedType, 0, 0),
        ("+OK\rX", .malformedLineEnd, 3, 0),
        ("+O\nK\r\n", .bareLineFeed, 2, 0),
        (":12a\r\n", .malformedInteger, 0, 0),
        (":\r\n", .malformedInteger, 0, 0),
        (":-\r\n", .malformedInteger, 0, 0),
        (":+1\r\n", .malformedInteger, 0, 0),
        (":9223372036854775808\r\n", .malformedInteger, 0, 0),
        (":-9223372036854775809\r\n", .malformedInteger, 0, 0),
        ("$-2\r\n", .malformedInteger, 0, 0),
        ("*-5\r\n", .malformedInteger, 0, 0),
        ("$3\r\nabcX\r\n", .missingBulkTerminator, 7, 0),
        (":1\r\n$3\r\nabc\rX", .missingBulkTerminator, 11, 1),
        ("*2\r\n:1\r\n!\r\n", .unsupportedType, 8, 0),
    ]

    @Test("well-formed replies decode", arguments: wellFormed)
    func decodes(input: String, expected: [RESPReply]) {
        let result = decodeAll([bytes(input)])
        #expect(result.error == nil)
        #expect(result.replies == expected)
    }

    @Test("malformed replies fail with a code and the offset of the fault", arguments: malformed)
    func refuses(input: String, code: RESPError.Code, offset: Int, repliesBefore: Int) {
        let result = decodeAll([bytes(input)])
        #expect(result.error?.code == code)
        #expect(result.error?.offset == offset)
        #expect(result.replies.count == repliesBefore)
    }

    @Test(
        "the same replies and error however the bytes are cut",
        arguments: wellFormed.map(\.0) + malformed.map(\.0)
    )
    func chunkInvariance(input: String) {
        let whole = decodeAll([bytes(input)])
        let byteByByte = decodeAll(bytes(input).map { [$0] })
        #expect(byteByByte.replies == whole.replies)
        #expect(byteByByte.error == whole.error)
        let all = bytes(input)
        for cut in 0...all.count {
            let split = decodeAll([Array(all[..<cut]), Array(all[cut...])])
            #expect(split.replies == whole.replies, "cut at \(cut)")
            #expect(split.error == whole.error, "cut at \(cut)")
        }
    }

    @Test("an incomplete reply is nil until its last byte arrives")
    func incomplete() throws {
        var decoder = RESPDecoder()
        decoder.feed(bytes("*2\r\n$5\r\nhel"))
        #expect(try decoder.next() == nil)
        #expect(!decoder.isAtReplyBoundary)
        decoder.feed(bytes("lo\r\n:7\r"))
        #expect(try decoder.next() == nil)
        decoder.feed(bytes("\n"))
        #expect(try decoder.next() == .array([.bulkString(bytes("hello")), .integer(7)]))
        #expect(try decoder.next() == nil)
        #expect(decoder.isAtReplyBoundary)
        #expect(decoder.bufferedByteCount == 0)
    }

    @Test("the first error is final")
    func errorIsSticky() {
        var decoder = RESPDecoder()
        decoder.feed(bytes("?\r\n"))
        #expect(throws: RESPError(.invalidTypeByte, offset: 0, "")) { try decoder.next() }
        decoder.feed(bytes("+OK\r\n"))
        #expect(throws: RESPError(.invalidTypeByte, offset: 0, "")) { try decoder.next() }
    }

    static let tight = RESPLimits(maxLineBytes: 8, maxBulkBytes: 4, maxArrayCount: 2, maxNestingDepth: 2, maxReplyBytes: 20)

    @Test(
        "limits refuse at the offset of what breaks them",
        arguments: [
            ("+1234567\r\n", nil, 0),  // 8 bytes: at the limit
            ("+12345678\r\n", RESPError.Code.lineTooLong, 0),
            (":1\r\n+123456789", .lineTooLong, 4),  // refused before its end arrives
            ("$4\r\nabcd\r\n", nil, 0),
            ("$5\r\nabcde\r\n", .bulkTooLong, 0),
            ("*2\r\n:1\r\n:2\r\n", nil, 0),
            ("*3\r\n", .arrayTooLong, 0),
            ("*1\r\n*1\r\n:1\r\n", nil, 0),
            ("*1\r\n*1\r\n*1\r\n:1\r\n", .nestingTooDeep, 8),
            ("*1\r\n*1\r\n*-1\r\n", .nestingTooDeep, 8),
            ("*2\r\n$4\r\nabcd\r\n:1\r\n", nil, 0),  // 4 + 10 + 4 = 18 bytes
            ("*2\r\n$4\r\nabcd\r\n$4\r\nabcd\r\n", .replyTooLarge, 0),  // 24, refused at the length line
            ("*2\r\n$4\r\nabcd\r\n+12345\r\n", .replyTooLarge, 0),  // 22
        ] as [(String, RESPError.Code?, Int)]
    )
    func limits(input: String, code: RESPError.Code?, offset: Int) {
        let whole = decodeAll([bytes(input)], limits: Self.tight)
        #expect(whole.error?.code == code)
        if code != nil { #expect(whole.error?.offset == offset) }
        let byteByByte = decodeAll(bytes(input).map { [$0] }, limits: Self.tight)
        #expect(byteByByte.error == whole.error)
        #expect(byteByByte.replies == whole.replies)
    }

    @Test("random replies round-trip through encoding, cut at random points")
    func randomRoundTrip() {
        var generator = SeededGenerator(seed: 0x5EED)
        for _ in 0..<200 {
            let replies = (0..<Int.random(in: 1...6, using: &generator)).map { _ in randomReply(depth: 0, using: &generator) }
            let stream = replies.flatMap { $0.encoded() }
            var chunks: [[UInt8]] = []
            var start = 0
            while start < stream.count {
                let length = Int.random(in: 1...max(1, stream.count / 3), using: &generator)
                chunks.append(Array(stream[start..<min(stream.count, start + length)]))
                start += length
            }
            let result = decodeAll(chunks)
            #expect(result.error == nil)
            #expect(result.replies == replies)
        }
    }

    @Test("consumed bytes are released as replies are taken")
    func bufferStaysSmall() throws {
        var decoder = RESPDecoder()
        var largest = 0
        for _ in 0..<10_000 {
            decoder.feed(bytes("+OK\r\n$-1\r\n"))
            #expect(try decoder.next() == .simpleString(bytes("OK")))
            #expect(try decoder.next() == .null)
            largest = max(largest, decoder.bufferedByteCount)
        }
        #expect(largest == 0)
        #expect(decoder.isAtReplyBoundary)
    }
}

func randomReply(depth: Int, using generator: inout SeededGenerator) -> RESPReply {
    let printable = Array(" !#$%&'()*+,-./0123456789:;<=>?@ABCXYZabcxyz~".utf8)
    func text() -> [UInt8] {
        (0..<Int.random(in: 0...12, using: &generator)).map { _ in printable.randomElement(using: &generator)! }
    }
    switch Int.random(in: 0...(depth < 3 ? 5 : 4), using: &generator) {
    case 0: return .simpleString(text())
    case 1: return .error(text())
    case 2: return .integer(Int64.random(in: .min ... .max, using: &generator))
    case 3: return .bulkString((0..<Int.random(in: 0...20, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) })
    case 4: return .null
    default:
        return .array((0..<Int.random(in: 0...4, using: &generator)).map { _ in randomReply(depth: depth + 1, using: &generator) })
    }
}
