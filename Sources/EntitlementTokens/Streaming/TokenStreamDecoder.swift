/// The outcome for one record of a stream: its token, or why it has none.
public struct DecodedRecord: Sendable {
    /// The record as cut from the stream.
    public var record: TokenRecord
    /// The decoded token, or why it did not decode.
    public var result: Result<DecodedToken, TokenError>

    /// 1-based position of the token in the stream.
    public var index: Int { record.index }
}

/// Decodes a stream of many tokens incrementally: `feed(_:)` chunks as they
/// arrive, then `finish()` (docs/DESIGN.md#the-librarys-habits). A bad record yields its error and
/// the stream goes on. Memory is bounded by one record, whatever the stream's length.
public final class TokenStreamDecoder {
    private var splitter: RecordSplitter
    /// The decoder every record goes through.
    public let decoder: TokenDecoder

    /// A stream decoder with one splitter and one decoder for `configuration`.
    public init(configuration: DecoderConfiguration = .default) {
        splitter = RecordSplitter(configuration: configuration)
        decoder = TokenDecoder(configuration: configuration)
    }

    /// Bytes held between calls (for the flat-memory tests).
    var retainedBytes: Int { splitter.retainedBytes }

    /// Feeds the next chunk; returns the records it completed, decoded, in order.
    public func feed(_ bytes: some Collection<UInt8>) -> [DecodedRecord] {
        splitter.feed(bytes).map(decode)
    }

    /// Ends the stream; returns the records still open, decoded.
    public func finish() -> [DecodedRecord] {
        splitter.finish().map(decode)
    }

    /// Decodes one record cut by a ``RecordSplitter`` (for callers that split
    /// on one thread and decode on several).
    public func decode(_ record: TokenRecord) -> DecodedRecord {
        if let error = record.error { return DecodedRecord(record: record, result: .failure(error)) }
        return DecodedRecord(
            record: record,
            result: Result { () throws(TokenError) in
                try decoder.decode(record.bytes, envelope: record.envelope)
            }
        )
    }
}
