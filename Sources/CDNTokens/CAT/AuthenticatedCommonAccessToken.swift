/// A Common Access Token whose MAC or signature a configured key checked, its
/// claims not yet judged: what ``UnverifiedCommonAccessToken/authenticated(by:)``
/// returns, and what a caller may keep for the same bytes presented again
/// (the gate's CAT readings, docs/DESIGN.md#cat-at-the-origin). Nothing may be
/// allowed on it: only ``verify(facts:expectedIssuer:expectedAudience:)``,
/// which judges the claims against one request, makes a ``VerifiedCommonAccessToken``.
public struct AuthenticatedCommonAccessToken: Sendable, Hashable {
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
}
