import CDNTokens
import CTestCrypto

/// FuzzEdgeAuth: Akamai EdgeAuth 2.0 tokens (docs/DESIGN.md#the-cdn-exchange).
///
/// - **Read, write, read is stable**: a token that reads has the input as its
///   ``EdgeAuthToken/text`` (the reader accepts one text per token), and that
///   text reads back as the same token, `hmac` its last field.
/// - **A verified token's fields are the signed bytes' fields**: the token is
///   re-signed with the harness's own HMAC (RFC 2104 over OpenSSL's digests,
///   no library code); it must verify, its proof must carry exactly the fields
///   of the signed bytes, and one flipped MAC byte must be `INVALID_SIGNATURE`.
/// - **ACL matching agrees with a plain dynamic-programming matcher** on
///   patterns and paths cut from the input (the fast matcher is linear-time).
/// - **An issued token verifies**: parameters cut from the input either are
///   refused as `INVALID_TOKEN_FORMAT` or give a token that reads back as
///   itself and verifies for its own URL, time and IP.
public final class CDNAkamaiOracle {
    public static let target = "FuzzEdgeAuth"
    static let keyBytes: [UInt8] = Array(0..<16).map { UInt8($0) &* 17 &+ 3 }
    let key: EdgeAuthKey

    public init() {
        guard let key = try? EdgeAuthKey(bytes: Self.keyBytes) else { setupFailure("the oracle's EdgeAuth key does not load") }
        self.key = key
    }

    public func check(_ input: [UInt8]) {
        checkReading(input)
        checkMatching(input)
        checkIssuing(input)
    }

    private func checkReading(_ input: [UInt8]) {
        let text = String(decoding: input, as: UTF8.self)
        guard let token = try? EdgeAuthToken(parsing: text) else { return }
        if Array(token.text.utf8) != input { oracleFailure(Self.target, "read then written differs: \(escaped(input)) → \(escaped(token.text))") }
        guard let again = try? EdgeAuthToken(parsing: token.text), again == token else {
            oracleFailure(Self.target, "a written token does not read back as itself: \(escaped(token.text))")
        }
        guard token.fields.last?.name == "hmac" else { oracleFailure(Self.target, "hmac is not the last field") }
        guard token.acl != nil else { return }  // URL form: the URL is not in the token; the ACL form covers the property.

        // Re-sign with the harness's own HMAC, for the digest the MAC's length names.
        let digest: OpaquePointer? =
            switch token.hmac.count {
            case 32: EVP_sha256()
            case 20: EVP_sha1()
            default: EVP_md5()
            }
        let algorithm: EdgeAuthAlgorithm =
            switch token.hmac.count {
            case 32: .sha256
            case 20: .sha1
            default: .md5
            }
        let signed = token.signedBytes(url: nil, salt: nil)
        guard let mac = independentHMAC(digest, key: Self.keyBytes, message: signed) else { oracleFailure(Self.target, "OpenSSL failed") }
        let resigned = String(decoding: signed, as: UTF8.self) + "~hmac=" + hex(mac)
        guard let fresh = try? EdgeAuthToken(parsing: resigned) else {
            oracleFailure(Self.target, "a re-signed token does not read: \(escaped(resigned))")
        }
        let facts = CDNRequestFacts(url: nil, now: fresh.startTime ?? fresh.expires, clientIP: fresh.ip.map(percentDecodedText), leeway: 0)
        do {
            let verified = try fresh.verify(key: key, facts: facts, algorithm: algorithm)
            let signedFields = verified.token.fields.dropLast().map { "\($0.name)=\($0.value)" }.joined(separator: "~")
            if Array(signedFields.utf8) != signed { oracleFailure(Self.target, "verified fields are not the signed bytes: \(escaped(signedFields))") }
        } catch {
            oracleFailure(Self.target, "a correctly signed token is refused: \(error) for \(escaped(resigned))")
        }
        var flipped = mac
        flipped[flipped.count / 2] ^= 0x01
        let forged = String(decoding: signed, as: UTF8.self) + "~hmac=" + hex(flipped)
        do {
            try EdgeAuthToken(parsing: forged).verify(key: key, facts: facts, algorithm: algorithm)
            oracleFailure(Self.target, "a token with a flipped MAC byte verifies: \(escaped(forged))")
        } catch {
            if error.status != .invalidSignature { oracleFailure(Self.target, "a flipped MAC gives \(error)") }
        }
    }

    /// Pattern and path from the input, over a small alphabet so they often match.
    private func checkMatching(_ input: [UInt8]) {
        let alphabet = Array("aab/ab*/%2fA".utf8)
        let split = min(input.count / 2, 48)
        let pattern = [UInt8(ascii: "/")] + input.prefix(split).map { alphabet[Int($0) % alphabet.count] }
        // The path is the pattern with each star filled from the input, then
        // perhaps cut or lengthened by a byte: matches and near misses.
        var filler = input.dropFirst(split).prefix(64).map { alphabet[Int($0) % alphabet.count] }.filter { $0 != UInt8(ascii: "*") }[...]
        var path: [UInt8] = []
        for byte in pattern {
            if byte == UInt8(ascii: "*") {
                let count = min(filler.count, Int(byte) % 3 + (filler.first.map { Int($0) % 4 } ?? 0))
                path += filler.prefix(count)
                filler = filler.dropFirst(count)
            } else {
                path.append(byte)
            }
        }
        switch input.last.map({ $0 % 4 }) {
        case 1: path.append(filler.first ?? UInt8(ascii: "a"))
        case 2: if path.count > 1 { path.removeLast() }
        default: break
        }
        let text = "exp=1~acl=" + String(decoding: pattern, as: UTF8.self) + "~hmac=" + String(repeating: "0", count: 64)
        guard let acl = (try? EdgeAuthToken(parsing: text))?.acl?.first else { return }  // empty, or a malformed escape
        let pathText = String(decoding: path, as: UTF8.self)
        let expected = Self.referenceMatch(pattern, path)
        if acl.covers(path: pathText) != expected {
            oracleFailure(Self.target, "ACL '\(escaped(pattern))' on '\(escaped(path))': the matcher says \(!expected), the reference \(expected)")
        }
    }

    /// The textbook table over (star | byte) symbols; pieces between stars percent-decoded.
    public static func referenceMatch(_ pattern: [UInt8], _ path: [UInt8]) -> Bool {
        var symbols: [Int] = []  // -1 is a star
        for (index, piece) in pattern.split(separator: UInt8(ascii: "*"), omittingEmptySubsequences: false).enumerated() {
            if index > 0 { symbols.append(-1) }
            symbols += referenceDecode(Array(piece)).map(Int.init)
        }
        let subject = referenceDecode(path)
        var row = [Bool](repeating: false, count: subject.count + 1)
        row[0] = true
        for symbol in symbols {
            var next = [Bool](repeating: false, count: subject.count + 1)
            for j in 0...subject.count {
                if symbol == -1 {
                    next[j] = row[j] || (j > 0 && next[j - 1])
                } else {
                    next[j] = j > 0 && row[j - 1] && Int(subject[j - 1]) == symbol
                }
            }
            row = next
        }
        return row[subject.count]
    }

    static func referenceDecode(_ bytes: [UInt8]) -> [UInt8] {
        func value(_ byte: UInt8) -> UInt8? {
            switch byte {
            case 0x30...0x39: byte - 0x30
            case 0x41...0x46: byte - 0x41 + 10
            case 0x61...0x66: byte - 0x61 + 10
            default: nil
            }
        }
        var out: [UInt8] = []
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count, let high = value(bytes[index + 1]), let low = value(bytes[index + 2]) {
                out.append(high * 16 + low)
                index += 3
            } else {
                out.append(bytes[index])
                index += 1
            }
        }
        return out
    }

    private func checkIssuing(_ input: [UInt8]) {
        guard input.count >= 8 else { return }
        let pathAlphabet = Array("abc/-._~!*;0%".utf8)
        let path = "/" + String(decoding: input.dropFirst(8).prefix(80).map { pathAlphabet[Int($0) % pathAlphabet.count] }, as: UTF8.self)
        guard let url = try? CDNURL(parsing: "https://cdn.example.test" + path) else { return }
        let scope: CDNScope = input[0] & 1 == 0 ? .folder : .url
        let now = 1_700_000_000 + Int64(input[1]) * 1000
        let lifetime = Int64(input[2]) * 60 - 10
        let leeway = Int64(input[3] % 64)
        let ip: String? =
            switch input[4] % 4 {
            case 0: nil
            case 1: "203.0.113.\(input[5])"
            case 2: "2001:db8::\(input[5])"
            default: "bad ip"
            }
        let parameters = CDNIssueParameters(url: url, scope: scope, now: now, lifetime: lifetime, leeway: leeway, clientIP: ip)
        let token: EdgeAuthToken
        do {
            token = try EdgeAuthIssuer.issue(parameters, key: key)
        } catch {
            if error.status != .invalidTokenFormat { oracleFailure(Self.target, "issuing refused with \(error)") }
            return
        }
        guard (try? EdgeAuthToken(parsing: token.text)) == token else {
            oracleFailure(Self.target, "an issued token does not read back: \(escaped(token.text))")
        }
        let facts = CDNRequestFacts(url: url, now: now + Int64(input[6]) % max(lifetime, 1), clientIP: ip, leeway: 0)
        do {
            try token.verify(key: key, facts: facts)
        } catch {
            oracleFailure(Self.target, "an issued token is refused: \(error) for \(escaped(token.text))")
        }
    }
}

/// HMAC (RFC 2104) over OpenSSL's plain digests (64-byte blocks: MD5, SHA-1,
/// SHA-256), sharing no code with the library's HMAC.
func independentHMAC(_ digest: OpaquePointer?, key: [UInt8], message: [UInt8]) -> [UInt8]? {
    func hash(_ bytes: [UInt8]) -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: 64)
        var length: UInt32 = 0
        guard EVP_Digest(bytes, bytes.count, &out, &length, digest, nil) == 1 else { return nil }
        return Array(out.prefix(Int(length)))
    }
    var block = key.count > 64 ? (hash(key) ?? []) : key
    block += [UInt8](repeating: 0, count: 64 - block.count)
    guard let inner = hash(block.map { $0 ^ 0x36 } + message) else { return nil }
    return hash(block.map { $0 ^ 0x5C } + inner)
}

/// `%XX` escapes decoded (an early-escaped `ip`), for comparing with a viewer's IP.
func percentDecodedText(_ text: String) -> String {
    String(decoding: CDNAkamaiOracle.referenceDecode(Array(text.utf8)), as: UTF8.self)
}
