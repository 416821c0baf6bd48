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

    @Test("the byte count is exact for long arguments too", arguments: [0, 9, 10, 99, 100, 12_345])
    func byteCount(length: Int) {
        let command = RESPCommand([Array("SET".utf8), [UInt8](repeating: 0x41, count: length)])
        #expect(command.encodedByteCount == command.encoded().count)
    }

    @Test("a decoder reads an encoded command back as an array of bulk strings")
    func roundTrip() throws {
        let command = RESPCommand("AUTH", "user", "p@ss word")
        var decoder = RESPDecoder()
        decoder.feed(command.encoded())
        #expect(try decoder.next() == .array(command.arguments.map { .bulkString($0) }))
    }
}
