/// Decoders for concurrent callers: each owns a libxml2 context and is used
/// by one caller at a time, then kept for the next (preferably by the same
/// thread: see ``ThreadAffinePool``). One pool serves every thread of a
/// server or a parallel stream.
@usableFromInline
final class TokenDecoderPool: Sendable {
    /// `TokenDecoder` is not Sendable, but each one is only ever touched by
    /// the single caller that took it out of the pool.
    private let idle = ThreadAffinePool<TokenDecoder>()
    let configuration: DecoderConfiguration

    init(configuration: DecoderConfiguration = .default) {
        self.configuration = configuration
    }

    @usableFromInline
    func withDecoder<Result>(_ body: (TokenDecoder) -> Result) -> Result {
        let decoder = idle.take() ?? TokenDecoder(configuration: configuration)
        defer { idle.give(decoder) }
        return body(decoder)
    }

    /// Decodes one record cut by a ``RecordSplitter``.
    func decode(_ record: TokenRecord) -> Result<DecodedToken, TokenError> {
        if let error = record.error { return .failure(error) }
        return withDecoder { decoder in
            Result { () throws(TokenError) in try decoder.decode(record.bytes, envelope: record.envelope) }
        }
    }
}
