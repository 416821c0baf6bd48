import RedisRESP
import Testing

@Suite("RESP: commands")
struct RESPCommandTests {
    @Test("a command is an array of bulk strings, whatever its bytes")
    func encoding() {
        let command = RESPCommand("SET", "k y\r\n", "1", "NX", "PXAT", "1700000000000")
        let expected = "*6\r\n$3\r\nSET\r\n$5\r\nk y\r\n\r\n$1\r\n1\r\n$2\r\nNX\r\n$4\r\nPXAT\r\n$13\r\n1700000000000\r\n"
        #expect(command.encoded() == Array(expected.utf8))
        #expect(command.encodedByteCount == expected.utf8.count)
        #expect(command.name == "SET")
    }

    @Test(
        "lengths are written in decimal and the byte count is exact, long arguments too",
        arguments: [0, 9, 10, 99, 100, 1_000, 12_345, 100_000]
    )
    func byteCount(length: Int) {
        let command = RESPCommand([Array("SET".utf8), [UInt8](repeating: 0x41, count: length)])
        let encoded = command.encoded()
        #expect(encoded.count == command.encodedByteCount)
        #expect(Array(encoded.prefix(13)) == Array("*2\r\n$3\r\nSET\r\n".utf8))
        let header = Array("$\(length)\r\n".utf8)
        #expect(Array(encoded[13..<(13 + header.count)]) == header)
    }

    @Test("a decoder reads an encoded command back as an array of bulk strings")
    func roundTrip() throws {
        let command = RESPCommand("AUTH", "user", "p@ss word")
        var decoder = RESPDecoder()
        decoder.feed(command.encoded())
        #expect(try decoder.next() == .array(command.arguments.map { .bulkString($0) }))
    }
}
