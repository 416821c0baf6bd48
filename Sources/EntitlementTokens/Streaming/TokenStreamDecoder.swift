/// The outcome for one record of a stream: its token, or why it has none.
public struct DecodedRecord: Sendable {
    public var record: TokenRecord
    public var result: Result<DecodedToken, TokenError>

    public var index: Int { record.index }
}

/// Decodes a stream of many tokens incrementally: `feed(_:)` chunks as they
/// arrive, then `finish()` (style habit 4). A bad record yields its error and
/// the stream goes on. Memory is bounded by one record, whatever the stream's length.
public final class TokenStreamDecoder {
    private var splitter: RecordSplitter
    public let decoder: TokenDecoder

    public init(configuration: DecoderConfiguration = .default) {
        splitter = RecordSplitter(configuration: configuration)
        decoder = TokenDecoder(configuration: configuration)
    }

    /// Bytes held between calls (for the flat-memory tests).
    var retainedBytes: Int { splitter.retainedBytes }

    public func feed(_ bytes: some Collection<UInt8>) -> [DecodedRecord] {
        splitter.feed(bytes).map(decode)
    }

    public func finish() -> [DecodedRecord] {
        splitter.finish().map(decode)
    }

    /// Decodes one record cut by a ``RecordSplitter`` (for callers that split
    /// on one thread and decode on several).
    public func decode(_ record: TokenRecord) -> DecodedRecord {
        if let error = record.error { return DecodedRecord(record: record, result: .failure(error)) }
        return DecodedRecord(record: record, result: Result { () throws(TokenError) in
            try decoder.decode(record.bytes, envelope: record.envelope)
        })
    }
}
