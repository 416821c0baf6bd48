import CDNTokens
import CTestCrypto

/// FuzzCAT: Common Access Tokens and the CBOR under them (docs/DESIGN.md#the-cdn-exchange, "Hostile input").
///
/// - **CBOR decode → encode → decode is stable**: bytes that read as a CBOR
///   item encode to bytes that read back as the same item, and encoding that
///   again gives the same bytes (preferred serialization is a fixed point).
/// - **A COSE message and its claims survive their own encoding**: a message
///   that reads re-encodes to bytes that read as the same message; claims
///   re-encode to the same claims; diagnostic notation and fields never trap.
/// - **A verified token has exactly the signed bytes' claims**: verified with
///   the oracle's HMAC key, a token is accepted only when an HMAC-SHA-256
///   computed here straight over OpenSSL (not through the library) matches,
///   and its claims are the claims decoded from the MAC'd payload.
/// - **An issued token verifies**, for a URL and times derived from the
///   input, and a one-byte change to it never verifies unless the bytes the
///   MAC covers (protected header, payload, tag) are unchanged.
public final class CDNCATOracle {
    public static let target = "FuzzCAT"
    static let keyBytes: [UInt8] = Array(0..<32)
    static let keyID = "fuzz"
    static let now: Int64 = 1_768_478_400
    let key: CATKey

    public init() {
        guard let key = try? CATKey(hmacHex: Self.keyBytes.map { String($0 >> 4, radix: 16) + String($0 & 15, radix: 16) }.joined(), id: Self.keyID)
        else {
            oracleFailure(Self.target, "cannot make the oracle's HMAC key")
        }
        self.key = key
    }

    public func check(_ input: [UInt8]) {
        checkCBOR(input)
        checkMessage(input)
        _ = try? UnverifiedCommonAccessToken(text: String(decoding: input, as: UTF8.self)).diagnostic
        checkIssuing(input)
    }

    private func checkCBOR(_ input: [UInt8]) {
        guard let value = try? CBORValue(cbor: input) else { return }
        let encoded = value.cbor()
        guard let again = try? CBORValue(cbor: encoded, limits: CBORLimits(maximumDepth: 16, maximumInputBytes: .max)) else {
            oracleFailure(Self.target, "the encoding of a CBOR item does not read back: \(hex(encoded))")
        }
        if again != value { oracleFailure(Self.target, "a CBOR item changed through encode/decode: \(value.diagnostic()) vs \(again.diagnostic())") }
        if again.cbor() != encoded { oracleFailure(Self.target, "preferred encoding is not a fixed point: \(hex(encoded))") }
        _ = value.diagnostic()
    }

    private func checkMessage(_ input: [UInt8]) {
        guard let token = try? UnverifiedCommonAccessToken(cbor: input) else { return }
        _ = token.diagnostic
        _ = token.fields
        let message = token.message
        guard let reread = try? UnverifiedCommonAccessToken(cbor: message.cbor()) else {
            oracleFailure(Self.target, "a COSE message's own encoding does not read back: \(hex(message.cbor()))")
        }
        if reread.message.protectedHeaderBytes != message.protectedHeaderBytes || reread.message.payload != message.payload
            || reread.message.authenticationTag != message.authenticationTag || reread.message.unprotectedHeader != message.unprotectedHeader
            || reread.message.structure != message.structure || reread.message.hasCOSETag != message.hasCOSETag
            || reread.message.hasCWTTag != message.hasCWTTag
        {
            oracleFailure(Self.target, "a COSE message changed through encode/decode")
        }
        guard let claims = try? CommonAccessToken(cbor: token.token.cbor()), claims == token.token else {
            oracleFailure(Self.target, "claims changed through encode/decode: \(token.token.diagnostic)")
        }
        let facts = CDNRequestFacts(
            url: try? CDNURL(parsing: "https://cdn.example.com/hls/tnt/seg-1.ts"),
            now: Self.now,
            clientIP: "192.0.2.1",
            method: "GET",
            leeway: 30
        )
        guard let verified = try? token.verify(keys: [key], facts: facts) else { return }
        guard message.structure == .mac0, let mac = independentHMAC(message.toBeAuthenticatedIndependently),
            mac == message.authenticationTag
        else {
            oracleFailure(Self.target, "VALID_TOKEN without an HMAC-SHA-256 that OpenSSL confirms")
        }
        guard let signedClaims = try? CommonAccessToken(cbor: message.payload), signedClaims == verified.token else {
            oracleFailure(Self.target, "verified claims differ from the claims in the MAC'd payload")
        }
    }

    private func checkIssuing(_ input: [UInt8]) {
        // A path of URL-safe characters from the input, a lifetime and a client IP.
        let allowed = Array("abcdefghijklmnopqrstuvwxyz0123456789-._~/".utf8)
        let path = "/" + String(decoding: input.prefix(64).map { allowed[Int($0) % allowed.count] }, as: UTF8.self)
        guard let url = try? CDNURL(parsing: "https://cdn.example.com" + path) else { return }
        let lifetime = Int64(input.first ?? 1) * 60 + 1
        let clientIP = input.count > 1 ? "198.51.100.\(input[1])" : nil
        let scope: CDNScope = input.count > 2 && input[2] & 1 == 1 ? .url : .folder
        let parameters = CDNIssueParameters(url: url, scope: scope, now: Self.now, lifetime: lifetime, leeway: 30, clientIP: clientIP)
        let text: String
        do { text = try CommonAccessTokenIssuer.issue(parameters, issuer: "fuzz-issuer", key: key) } catch {
            oracleFailure(Self.target, "issuing refused \(url): \(error)")
        }
        let facts = CDNRequestFacts(url: url, now: Self.now, clientIP: clientIP, method: "GET", leeway: 30)
        let issued: UnverifiedCommonAccessToken
        do {
            issued = try UnverifiedCommonAccessToken(text: text)
            _ = try issued.verify(keys: [key], facts: facts, expectedIssuer: "fuzz-issuer")
        } catch {
            oracleFailure(Self.target, "an issued token does not verify for \(url): \(error)")
        }
        var bytes = issued.message.cbor()
        let index = Int(input.last ?? 0) % bytes.count
        bytes[index] ^= UInt8(truncatingIfNeeded: (input.count % 255) + 1)
        if let mutated = try? UnverifiedCommonAccessToken(cbor: bytes), (try? mutated.verify(keys: [key], facts: facts)) != nil {
            let original = issued.message
            let changed = mutated.message
            if changed.protectedHeaderBytes != original.protectedHeaderBytes || changed.payload != original.payload
                || changed.authenticationTag != original.authenticationTag
            {
                oracleFailure(Self.target, "a token changed at byte \(index) in MAC'd bytes still verifies: \(hex(bytes))")
            }
        }
    }

    /// HMAC-SHA-256 with the oracle's key, straight over OpenSSL's EVP_Q_mac.
    private func independentHMAC(_ message: [UInt8]) -> [UInt8]? {
        var output = [UInt8](repeating: 0, count: 64)
        var length = 0
        let done = Self.keyBytes.withUnsafeBytes { key in
            EVP_Q_mac(nil, "HMAC", nil, "SHA256", nil, key.baseAddress, key.count, message, message.count, &output, output.count, &length) != nil
        }
        return done ? Array(output.prefix(length)) : nil
    }
}

extension COSEMessage {
    /// `["MAC0", protected, h'', payload]` built here by hand (RFC 9052 §6.3), not by the library.
    var toBeAuthenticatedIndependently: [UInt8] {
        func head(_ major: UInt8, _ count: Int) -> [UInt8] {
            switch count {
            case 0..<24: return [major << 5 | UInt8(count)]
            case 24..<256: return [major << 5 | 24, UInt8(count)]
            case 256..<65536: return [major << 5 | 25, UInt8(count >> 8), UInt8(count & 0xFF)]
            default: return [major << 5 | 26] + (0..<4).reversed().map { UInt8(truncatingIfNeeded: count >> ($0 * 8)) }
            }
        }
        let context = Array("MAC0".utf8)
        return [0x84] + head(3, context.count) + context + head(2, protectedHeaderBytes.count) + protectedHeaderBytes + [0x40]
            + head(2, payload.count) + payload
    }
}
