/// A Common Access Token whose MAC or signature a configured key checked and
/// whose claims held for the request: the proof a caller acts on. Made only
/// by ``UnverifiedCommonAccessToken/verify(keys:facts:expectedIssuer:expectedAudience:)``
/// or ``AuthenticatedCommonAccessToken/verify(facts:expectedIssuer:expectedAudience:)``,
/// from the claims decoded from the very bytes the key checked.
public struct VerifiedCommonAccessToken: Sendable, Hashable {
    /// The authenticated reading whose claims held.
    public let authenticated: AuthenticatedCommonAccessToken

    /// The one door, for the verifier: the caller vouches that the claims held.
    init(claimsHeldBy authenticated: AuthenticatedCommonAccessToken) {
        self.authenticated = authenticated
    }

    public var token: CommonAccessToken { authenticated.token }
    public var message: COSEMessage { authenticated.message }
    /// The id of the key that checked it (nil for a key without an id).
    public var keyID: String? { authenticated.keyID }
    public var claims: [CBORMapEntry] { token.claims }
    /// `cti`: what the replay store remembers.
    public var cti: [UInt8]? { token.cti }
    /// `catreplay` as written; nil when absent (reuse permitted).
    public var replay: CATReplayPolicy? { token.replay }
}
