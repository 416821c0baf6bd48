import Testing
import TokenTestSupport

@testable import EntitlementTokens

enum StreamHelpers {
    /// Feeds `text` whole and returns every record.
    static func decodeAll(_ text: String, configuration: DecoderConfiguration = .default) -> [DecodedRecord] {
        decode(Array(text.utf8), splits: [], configuration: configuration)
    }

    /// Feeds `bytes` cut at `splits` (sorted offsets) and returns every record.
    static func decode(_ bytes: [UInt8], splits: [Int], configuration: DecoderConfiguration = .default) -> [DecodedRecord] {
        let decoder = TokenStreamDecoder(configuration: configuration)
        var records: [DecodedRecord] = []
        var start = 0
        for split in splits + [bytes.count] where split >= start {
            records += decoder.feed(bytes[start..<split])
            start = split
        }
        return records + decoder.finish()
    }

    /// Feeds `bytes` whole, byte by byte and at `randomSplits` sets of random cut
    /// points, expects the same records every way (docs/DESIGN.md#the-librarys-habits), and returns them.
    static func decodeEveryWay(
        _ bytes: [UInt8],
        configuration: DecoderConfiguration = .default,
        randomSplits: Int = 20,
        seed: UInt64 = 0x5EED,
        sourceLocation: Testing.SourceLocation = #_sourceLocation
    ) -> [DecodedRecord] {
        let whole = decode(bytes, splits: [], configuration: configuration)
        let expected = whole.map(summary)
        let byteByByte = decode(bytes, splits: Array(0..<bytes.count), configuration: configuration).map(summary)
        #expect(byteByByte == expected, "fed byte by byte", sourceLocation: sourceLocation)
        var generator = SeededGenerator(seed: seed)
        for _ in 0..<randomSplits {
            let count = Int.random(in: 1...12, using: &generator)
            let splits = (0..<count).map { _ in Int.random(in: 0...bytes.count, using: &generator) }.sorted()
            #expect(
                decode(bytes, splits: splits, configuration: configuration).map(summary) == expected,
                "splits \(splits)",
                sourceLocation: sourceLocation
            )
        }
        return whole
    }

    static func decodeEveryWay(
        _ text: String,
        configuration: DecoderConfiguration = .default,
        randomSplits: Int = 20,
        sourceLocation: Testing.SourceLocation = #_sourceLocation
    ) -> [DecodedRecord] {
        decodeEveryWay(Array(text.utf8), configuration: configuration, randomSplits: randomSplits, sourceLocation: sourceLocation)
    }

    /// A comparable summary of a record: index, line, and the token's fields or the error.
    static func summary(_ record: DecodedRecord) -> String {
        switch record.result {
        case .success(let token):
            return "\(record.index)@\(record.record.line)+\(record.record.byteOffset) \(token.root) \(token.transport) "
                + token.fields.map { "\($0.path)=\($0.value)" }.joined(separator: "|")
                + " signed=\(token.signedBytes.count) sig=\(token.signatureText)"
                + (token.envelope.map { " envelope \($0.fields.map { "\($0.key)=\($0.value)" })" } ?? "")
        case .failure(let error):
            return "\(record.index)@\(record.record.line) ERROR \(error)"
                + (record.record.envelope.map { " envelope \($0.version) \($0.fields.map { "\($0.key)=\($0.value)" })" } ?? "")
        }
    }
}

extension DecodedRecord {
    var errorCode: TokenError.Code? {
        if case .failure(let error) = result { return error.code }
        return nil
    }

    var errorMessage: String? {
        if case .failure(let error) = result { return error.message }
        return nil
    }
}
