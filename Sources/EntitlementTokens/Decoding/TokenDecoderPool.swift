internal import Synchronization

/// Decoders for concurrent callers: each owns a libxml2 context and is used
/// by one caller at a time, then kept for the next (preferably by the same
/// thread: see ``ThreadAffinePool``).
///
/// The one way the library reuses parsers: one pool per configuration
/// (``shared(for:)``) serves every verifier, stream and Media RSS reading of
/// that configuration, so a parser always applies the limits of the work it
/// does.
@usableFromInline
final class TokenDecoderPool: Sendable {
    /// `TokenDecoder` is not Sendable, but each one is only ever touched by
    /// the single caller that took it out of the pool.
    private let idle = ThreadAffinePool<TokenDecoder>()
    let configuration: DecoderConfiguration

    init(configuration: DecoderConfiguration = .default) {
        self.configuration = configuration
    }

    /// The pool of `configuration`'s decoders. A process uses a few
    /// configurations at most; beyond ``sharedCapacity`` of them the least
    /// recently asked for is forgotten (its users keep it alive).
    static func shared(for configuration: DecoderConfiguration) -> TokenDecoderPool {
        sharedPools.withLock { pools in
            if let index = pools.firstIndex(where: { $0.configuration == configuration }) {
                let pool = pools[index]
                if index != pools.count - 1 { pools.append(pools.remove(at: index)) }
                return pool
            }
            let pool = TokenDecoderPool(configuration: configuration)
            if pools.count == sharedCapacity { pools.removeFirst() }
            pools.append(pool)
            return pool
        }
    }

    static let sharedCapacity = 8
    private static let sharedPools = Mutex<[TokenDecoderPool]>([])

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
