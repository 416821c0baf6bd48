import CDNTokens
import EntitlementTokens

/// What a capture's credentials are judged with: the programmer's token keys,
/// a CDN profile per kind, and the leeway. A credential whose kind has no key
/// is "not checked" for its signature and scope, never "valid"; its time is
/// still judged, since that needs no key.
package struct HARKeys: Sendable {
    package var tokenKeys: KeyRing?
    package var profiles: [CDNProfile]
    package var leewaySeconds: Int64

    package init(tokenKeys: KeyRing? = nil, profiles: [CDNProfile] = [], leewaySeconds: Int64 = 30) {
        self.tokenKeys = tokenKeys
        self.profiles = profiles
        self.leewaySeconds = leewaySeconds
    }

    func profile(for kind: CDNTokenKind) -> CDNProfile? { profiles.first { $0.kind == kind } }
}
