import CDNTokens
import EntitlementTokens

/// What a capture's credentials are judged with: the programmer's token keys,
/// a CDN profile per kind, the keys a Common Access Token is verified with at
/// the origin (`--cat-key`), the gate's playback session secrets, and the
/// leeway. A credential whose kind has no key is "not checked" for its
/// signature and scope, never "valid"; its time is still judged, since that
/// needs no key.
package struct HARKeys: Sendable {
    package var tokenKeys: KeyRing?
    package var profiles: [CDNProfile]
    /// `--cat-key`: a CAT is judged with these as the gate's origin check judges it.
    package var catKeys: [CATKey]
    /// `--session-secret`: the gate's secrets, the first that signs and every one that verifies.
    package var sessionSecrets: PlaybackSessionSecrets?
    package var leewaySeconds: Int64

    package init(
        tokenKeys: KeyRing? = nil,
        profiles: [CDNProfile] = [],
        catKeys: [CATKey] = [],
        sessionSecrets: PlaybackSessionSecrets? = nil,
        leewaySeconds: Int64 = 30
    ) {
        self.tokenKeys = tokenKeys
        self.profiles = profiles
        self.catKeys = catKeys
        self.sessionSecrets = sessionSecrets
        self.leewaySeconds = leewaySeconds
    }

    func profile(for kind: CDNTokenKind) -> CDNProfile? { profiles.first { $0.kind == kind } }
}
