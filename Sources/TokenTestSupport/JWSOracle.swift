import EntitlementTokens
import Foundation

/// FuzzJWS: software statements (docs/DESIGN.md#hostile-credentials).
///
/// - **Decode, re-encode, decode is stable**: a statement that decodes has a
///   header and claims whose compact JSON (``JSONValue/encoded``) reads back as
///   the same values, and a statement rebuilt from those encodings decodes to the
///   same header and claims.
/// - **A verified statement's claims are the signed bytes' claims**: verified
///   against the samples' trusted keys, a `VALID_TOKEN` must carry, as its proof,
///   exactly the claims decoded from the payload part of the bytes the signature
///   covers, and its `alg` must be on the allow-list.
/// - **Minting round-trips**: input that reads as a JSON object is minted as the
///   claims of a statement with the samples' RSA key; verifying it must never be
///   `INVALID_SIGNATURE` or `INVALID_TOKEN_FORMAT`, and its claims must be the input's.
/// - Detection (``CredentialDetection``) of the input never crashes, and what it
///   calls a software statement decodes or fails with a typed error.
public final class JWSOracle {
    public static let target = "FuzzJWS"
    let verifier: SoftwareStatementVerifier
    let signingKey: SigningKey?

    /// `keyDirectory`: Samples/keys/trusted; the signing key is its parent's test-rsa2048.pem.
    public init(keyDirectory: String) {
        guard let ring = try? KeyRing.load(paths: [keyDirectory]),
            let verifier = try? SoftwareStatementVerifier(ring: ring, clock: { TokenTimestamp(millisecondsSince1970: 1_768_478_400_000)! })
        else { setupFailure("cannot load the trusted keys in \(keyDirectory)") }
        self.verifier = verifier
        signingKey = try? SigningKey(path: keyDirectory + "/../test-rsa2048.pem")
        if signingKey == nil { setupFailure("cannot load \(keyDirectory)/../test-rsa2048.pem") }
    }

    public func check(_ input: [UInt8]) {
        checkDecoding(input)
        if case .softwareStatement(let compact, _) = CredentialDetection.detect(input) {
            checkDecoding(compact)
        }
        checkMinting(input)
    }

    private func checkDecoding(_ compact: [UInt8]) {
        guard let statement = try? SoftwareStatement(compact: compact) else { return }
        for (name, value) in [("header", statement.header), ("claims", statement.claims)] {
            guard let again = try? JSONValue.readObject(value.encoded) else {
                oracleFailure(Self.target, "the \(name)'s encoding does not read back: \(String(decoding: value.encoded, as: UTF8.self))")
            }
            if again != value { oracleFailure(Self.target, "the \(name) changed through encode/decode") }
        }
        let rebuilt =
            IndependentBase64URL.encode(statement.header.encoded) + "." + IndependentBase64URL.encode(statement.claims.encoded) + "."
            + IndependentBase64URL.encode(statement.signature)
        guard let second = try? SoftwareStatement(compact: Array(rebuilt.utf8)) else {
            oracleFailure(Self.target, "a statement rebuilt from its own encodings does not decode")
        }
        if second.header != statement.header || second.claims != statement.claims || second.signature != statement.signature {
            oracleFailure(Self.target, "a rebuilt statement decodes differently")
        }
        let verdict = verifier.verify(statement)
        guard verdict.status == .validToken else {
            if verdict.verified != nil { oracleFailure(Self.target, "a \(verdict.status) verdict carries a proof") }
            return
        }
        guard let proof = verdict.verified else { oracleFailure(Self.target, "VALID_TOKEN without a proof") }
        guard let name = statement.algorithmName, JWSAlgorithm(rawValue: name) != nil else {
            oracleFailure(Self.target, "VALID_TOKEN for alg \(statement.algorithmName ?? "nil")")
        }
        let parts = statement.signingInput.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 2, let payload = IndependentBase64URL.decode(Array(parts[1])),
            let signedClaims = try? JSONValue.readObject(payload)
        else {
            oracleFailure(Self.target, "the signed bytes of a valid statement do not hold its claims")
        }
        if signedClaims != proof.statement.claims { oracleFailure(Self.target, "verified claims differ from the signed bytes' claims") }
    }

    private func checkMinting(_ input: [UInt8]) {
        guard let signingKey, let claims = try? JSONValue.readObject(input), let members = claims.members else { return }
        guard let text = try? SoftwareStatementMinter.mint(claims: members, keyID: "fuzz", key: signingKey) else {
            oracleFailure(Self.target, "minting refused claims that read as JSON")
        }
        let verdict = verifier.verify(compact: Array(text.utf8))
        switch verdict.status {
        case .invalidSignature:
            oracleFailure(Self.target, "a minted statement does not verify: \(verdict.reason)")
        case .invalidTokenFormat:
            // Only claims the reader refuses by type (exp/iat/nbf not NumericDates, aud not strings).
            let typed = ["exp", "iat", "nbf", "aud"].contains { claims[$0] != nil }
            if !typed { oracleFailure(Self.target, "a minted statement does not decode: \(verdict.reason)") }
        default:
            if verdict.statement?.claims != claims { oracleFailure(Self.target, "minted claims changed") }
        }
    }
}

/// Base64url without padding, written here (not the library's) so the oracle
/// does not check the library's encoder against itself.
enum IndependentBase64URL {

    static func encode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func decode(_ text: [UInt8]) -> [UInt8]? {
        var string = String(decoding: text, as: UTF8.self).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while string.utf8.count % 4 != 0 { string += "=" }
        return Data(base64Encoded: string).map(Array.init)
    }
}
