import CDNTokens
import EntitlementTokens
import Foundation
import HTTPTypes
import TokenGate

/// Common Access Tokens for the gate's tests (docs/DESIGN.md#cat-at-the-origin),
/// made by the library's issuer with the CAT fixture keys of the CDN tests.
enum CATGateFixtures {
    /// The header a Common Access Token travels in.
    static let header = HTTPField.Name("CTA-Common-Access-Token")!
    static let directory = GateFixtures.repository.appendingPathComponent("Tests/CDNTokensTests/Fixtures/CAT")
    static let hmacPath = directory.appendingPathComponent("hmac.hex").path

    /// A gate whose `--cat-key` (kid edge-1) is a copy of the HMAC fixture key
    /// in `directory`, for a test that rewrites the file and reloads.
    static func gateWithRewritableKey(in directory: URL, clock: GateFixtures.Clock) throws -> (runtime: GateRuntime, keyFile: URL) {
        let keyFile = directory.appendingPathComponent("cat.hex")
        try FileManager.default.copyItem(atPath: hmacPath, toPath: keyFile.path)
        return (try GateFixtures.runtime(["--cat-key", "\(keyFile.path) edge-1"], clock: clock), keyFile)
    }
    static let es256Path = directory.appendingPathComponent("es256-private.pem").path
    static let otherES256Path = directory.appendingPathComponent("es256-other-private.pem").path

    static func hmacKey(id: String? = "edge-1") -> CATKey {
        try! CATKey(keyFile: [UInt8](FileManager.default.contents(atPath: hmacPath)!), id: id, source: hmacPath)
    }

    static func es256Key(id: String? = "edge-es", path: String = es256Path) -> CATKey {
        try! CATKey(keyFile: [UInt8](FileManager.default.contents(atPath: path)!), id: id, source: path)
    }

    static func claim(_ claim: CATClaim, _ value: CBORValue) -> CBORMapEntry { CBORMapEntry(.integer(claim.rawValue), value) }

    static func catu(_ component: CATURIComponent, _ match: CATMatchType, _ text: String) -> CBORMapEntry {
        claim(.catu, .map([CBORMapEntry(.integer(component.rawValue), .map([CBORMapEntry(.integer(match.rawValue), .text(text))]))]))
    }

    static func catnip(_ address: [UInt8]) -> CBORMapEntry {
        claim(.catnip, .array([.tagged(52, .bytes(address))]))
    }

    /// What the gate's issuer writes for the folder `/hls/tnt/` at `now`
    /// (seconds), good for `lifetime` seconds, with a fresh random `cti`.
    static func standardClaims(now: Int64, lifetime: Int64 = 600, issuer: String = "cdn.example") -> [CBORMapEntry] {
        let parameters = CDNIssueParameters(
            url: try! CDNURL(parsing: "https://origin.example/hls/tnt/master.m3u8"),
            scope: .folder,
            now: now,
            lifetime: lifetime
        )
        return try! CommonAccessTokenIssuer.claims(for: parameters, issuer: issuer, cti: randomCTI()).claims
    }

    static func randomCTI() -> [UInt8] { (0..<16).map { _ in UInt8.random(in: 0...255) } }

    /// `claims` as a CAT's text (base64url, no padding), made with `key`.
    static func token(_ claims: [CBORMapEntry], key: CATKey = hmacKey()) -> String {
        let message = try! CommonAccessTokenIssuer.message(claims: CommonAccessToken(claims: claims), key: key)
        return Data(message.cbor()).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// The standard claims with `changes` applied: a claim given replaces
    /// the one of that key, or is added; `removing` drops claims.
    static func token(now: Int64, _ changes: [CBORMapEntry] = [], removing: Set<CATClaim> = [], key: CATKey = hmacKey()) -> String {
        var claims = standardClaims(now: now).filter { entry in !removing.contains { entry.key == .integer($0.rawValue) } }
        for change in changes {
            if let index = claims.firstIndex(where: { $0.key == change.key }) { claims[index] = change } else { claims.append(change) }
        }
        return token(claims, key: key)
    }

    /// The seconds of a timestamp, as CWT times are written.
    static func seconds(_ time: TokenTimestamp) -> Int64 { time.millisecondsSince1970 / 1000 }
}
