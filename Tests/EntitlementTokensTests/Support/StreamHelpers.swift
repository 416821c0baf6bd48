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

    /// A comparable summary of a record: index, line, and the token's fields or the error.
    static func summary(_ record: DecodedRecord) -> String {
        switch record.result {
        case .success(let token):
            return "\(record.index)@\(record.record.line) \(token.root) \(token.transport) "
                + token.fields.map { "\($0.path)=\($0.value)" }.joined(separator: "|")
                + " signed=\(token.signedBytes.count) sig=\(token.signatureText)"
        case .failure(let error):
            return "\(record.index)@\(record.record.line) ERROR \(error)"
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
