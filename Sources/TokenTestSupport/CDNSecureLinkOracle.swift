import CDNTokens
import CTestCrypto

/// FuzzSecureLink: nginx `secure_link` tokens and `secure_link_md5`
/// expressions (docs/DESIGN.md#the-cdn-exchange).
///
/// - **Read, write, read is stable**: an expression that reads, written as
///   nginx's value with `$secret` kept, reads back with the same parts; a
///   token (`md5&expires` from the input) that reads writes a query string
///   that reads back as the same token, from the query names and the cookie names.
/// - **A verified token is the signed bytes' token**: a token made by the
///   harness's own MD5 (OpenSSL's digest, not the library's) over an
///   expression's text verifies; its expiry one second later does not.
/// - **An issued token verifies**: parameters cut from the input either are
///   refused as `INVALID_TOKEN_FORMAT` or give a token that verifies for a
///   file under its scope, and whose MD5 the harness recomputes.
public final class CDNSecureLinkOracle {
    public static let target = "FuzzSecureLink"
    static let secret = Array("oracle-secret".utf8)
    static let expressions: [SecureLinkExpression] = [
        "$secure_link_expires$folder $secret", "$secure_link_expires$folder$remote_addr $secret",
        "$secure_link_expires$uri $secret", "${secret}:${uri}:${remote_addr}:${secure_link_expires}",
    ].map { text in
        guard let expression = try? SecureLinkExpression(parsing: text) else { setupFailure("the oracle's expression '\(text)' does not read") }
        return expression
    }

    public init() {}

    public func check(_ input: [UInt8]) {
        checkExpression(input)
        checkToken(input)
        checkIssuing(input)
    }

    private func checkExpression(_ input: [UInt8]) {
        guard let expression = try? SecureLinkExpression(parsing: String(decoding: input, as: UTF8.self)) else { return }
        // Braced: a bare `$secret` before letters would read as another variable (a FailCases input).
        let written = expression.nginxValue(secretText: "${secret}")
        // Braces lengthen the text: one written past the reader's limit is not a second reading.
        guard written.utf8.count <= SecureLinkExpression.maximumLength else { return }
        guard let again = try? SecureLinkExpression(parsing: written), again.parts == expression.parts else {
            oracleFailure(Self.target, "an expression written as nginx's value reads differently: \(escaped(input)) → \(escaped(written))")
        }
    }

    private func checkToken(_ input: [UInt8]) {
        let halves = input.split(separator: UInt8(ascii: "&"), maxSplits: 1, omittingEmptySubsequences: false)
        guard halves.count == 2,
            let token = try? SecureLinkToken(md5: String(decoding: halves[0], as: UTF8.self), expires: String(decoding: halves[1], as: UTF8.self))
        else { return }
        let pairs = token.queryString.split(separator: "&").map { pair -> CDNField in
            let parts = pair.split(separator: "=", maxSplits: 1)
            return CDNField(String(parts[0]), String(parts.count > 1 ? parts[1] : ""))
        }
        guard (try? SecureLinkToken(pairs: pairs)) == token, let cookies = try? token.cookies(), (try? SecureLinkToken(pairs: cookies)) == token
        else {
            oracleFailure(Self.target, "a token does not read back from its own query or cookies: \(escaped(token.queryString))")
        }
        // The input's md5 is almost never right: one the harness computes must be, and the input's must then be refused.
        let facts = CDNRequestFacts(url: nil, now: token.expires, clientIP: nil)
        let folderExpression = Self.expressions[0]  // "$secure_link_expires$folder $secret"
        guard let folderMD5 = independentMD5(Array(String(token.expires).utf8) + Array("/f/".utf8) + [0x20] + Self.secret),
            let signed = try? SecureLinkToken(md5: independentBase64URL(folderMD5), expires: String(token.expires))
        else {
            oracleFailure(Self.target, "the harness's token does not read")
        }
        do {
            let verified = try signed.verify(expression: folderExpression, secret: Self.secret, facts: facts, folder: "/f/")
            if verified.token != signed || verified.folder != "/f/" { oracleFailure(Self.target, "the proof is not the signed token") }
        } catch {
            oracleFailure(Self.target, "a token the harness signed is refused: \(error)")
        }
        if token.md5 != signed.md5 {
            do {
                try token.verify(expression: folderExpression, secret: Self.secret, facts: facts, folder: "/f/")
                oracleFailure(Self.target, "a token with another md5 verifies: \(escaped(token.queryString))")
            } catch {
                if error.status != .invalidSignature { oracleFailure(Self.target, "another md5 gives \(error)") }
            }
        }
        if token.expires < Int64.max {
            var late = facts
            late.now = token.expires + 1
            do {
                try signed.verify(expression: folderExpression, secret: Self.secret, facts: late, folder: "/f/")
                oracleFailure(Self.target, "a token verifies a second after it expires")
            } catch {
                if error.status != .tokenExpired { oracleFailure(Self.target, "an expired token gives \(error)") }
            }
        }
    }

    private func checkIssuing(_ input: [UInt8]) {
        guard input.count >= 6 else { return }
        let pathAlphabet = Array("ab/./%41-_".utf8)
        let path = "/" + String(decoding: input.dropFirst(6).prefix(60).map { pathAlphabet[Int($0) % pathAlphabet.count] }, as: UTF8.self)
        guard let url = try? CDNURL(parsing: "https://edge.example.test" + path) else { return }
        let expression = Self.expressions[Int(input[0]) % Self.expressions.count]
        let scope: CDNScope = expression.uses(.uri) ? .url : .folder
        let ip: String? = expression.uses(.remoteAddress) ? (input[1] & 1 == 0 ? "198.51.100.\(input[2])" : "2001:db8::\(input[2])") : nil
        let now = 1_700_000_000 + Int64(input[3]) * 977
        let lifetime = Int64(input[4]) * 30 - 5
        let parameters = CDNIssueParameters(url: url, scope: scope, now: now, lifetime: lifetime, clientIP: ip)
        let token: SecureLinkToken
        do {
            token = try SecureLinkIssuer.issue(parameters, expression: expression, secret: Self.secret)
        } catch {
            if error.status != .invalidTokenFormat { oracleFailure(Self.target, "issuing refused with \(error)") }
            return
        }
        // The harness's own MD5 over the expression as it substitutes it, with `$uri` and
        // `$folder` as nginx hashes them: the path percent-decoded (the harness's own decoder).
        let nginxURI = CDNAkamaiOracle.referenceDecode(Array(url.path.utf8))
        let nginxFolder = nginxURI.lastIndex(of: UInt8(ascii: "/")).map { Array(nginxURI[...$0]) } ?? [UInt8(ascii: "/")]
        var hashed: [UInt8] = []
        for part in expression.parts {
            switch part {
            case .literal(let text): hashed += text.utf8
            case .variable(.expires): hashed += String(token.expires).utf8
            case .variable(.uri): hashed += nginxURI
            case .variable(.folder): hashed += nginxFolder
            case .variable(.remoteAddress): hashed += (ip ?? "").utf8
            case .variable(.secret): hashed += Self.secret
            }
        }
        if independentMD5(hashed) != token.md5 { oracleFailure(Self.target, "an issued md5 is not the MD5 of \(escaped(hashed))") }
        let file = scope == .url ? url : ((try? CDNURL(parsing: "https://edge.example.test" + url.folderPath + "seg-1.ts")) ?? url)
        do {
            try token.verify(expression: expression, secret: Self.secret, facts: CDNRequestFacts(url: file, now: now, clientIP: ip))
        } catch {
            oracleFailure(Self.target, "an issued token is refused: \(error) for \(escaped(token.queryString)) at \(escaped(file.description))")
        }
    }
}

func independentMD5(_ bytes: [UInt8]) -> [UInt8]? {
    var out = [UInt8](repeating: 0, count: 64)
    var length: UInt32 = 0
    guard EVP_Digest(bytes, bytes.count, &out, &length, EVP_md5(), nil) == 1 else { return nil }
    return Array(out.prefix(Int(length)))
}

/// Base64url without padding, written here so the library's encoder is not checked against itself.
func independentBase64URL(_ bytes: [UInt8]) -> String {
    let symbols = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    var out: [UInt8] = []
    var index = 0
    while index < bytes.count {
        let chunk = bytes[index..<min(index + 3, bytes.count)]
        let value = chunk.enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << (16 - 8 * $1.offset) }
        for position in 0...chunk.count { out.append(symbols[Int(value >> (18 - 6 * position) & 63)]) }
        index += 3
    }
    return String(decoding: out, as: UTF8.self)
}
