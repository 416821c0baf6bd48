/// A Common Access Token whose MAC or signature a configured key checked and
/// whose claims held for the request: the proof a caller acts on. Made only
/// by ``UnverifiedCommonAccessToken/verify(keys:facts:expectedIssuer:expectedAudience:)``,
/// from the claims decoded from the very bytes the key checked.
public struct VerifiedCommonAccessToken: Sendable, Hashable {
    public let token: CommonAccessToken
    public let message: COSEMessage
    /// The id of the key that checked it (nil for a key without an id).
    public let keyID: String?

    /// The one door, for the verifier: the caller vouches that `message`
    /// verified and that `token` was read from its payload.
    init(uncheckedMessage message: COSEMessage, token: CommonAccessToken, keyID: String?) {
        self.message = message
        self.token = token
        self.keyID = keyID
    }

    public var claims: [CBORMapEntry] { token.claims }
    /// `cti`: what the replay store remembers.
    public var cti: [UInt8]? { token.cti }
    /// `catreplay` as written; nil when absent (reuse permitted).
    public var replay: CATReplayPolicy? { token.replay }
}
