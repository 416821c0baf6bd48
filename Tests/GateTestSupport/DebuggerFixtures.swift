import EntitlementTokens
import Foundation

/// What the debugger's tests paste and expect, in process (`TokenGateTests/Debugger`)
/// and in Chromium (`TokenGateIntegrationTests/Debugger`).
enum DebuggerFixtures {
    /// The start of every debugger answer's `Content-Security-Policy`.
    static let strictCSP =
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; "
        + "base-uri 'none'; form-action 'none'; frame-ancestors 'none'; require-trusted-types-for 'script'"

    /// The untrusted signing key's public half, as `openssl pkey -pubout` writes it.
    static let untrustedPublicPEM = pem(GateFixtures.untrustedKey.publicKey.derRepresentation)

    static func pem(_ der: [UInt8], label: String = "PUBLIC KEY") -> String {
        let base64 = Data(der).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
        return "-----BEGIN \(label)-----\n\(base64)\n-----END \(label)-----\n"
    }

    /// A software statement signed by `key`, with a hostile `software_id`.
    static func statement(key: SigningKey, expires: TokenTimestamp? = nil) throws -> String {
        var claims = [
            JSONMember(name: "software_id", value: .string("app-<b>1</b>")),
            JSONMember(name: "iss", value: .string("Adobe Pass")),
            JSONMember(name: "iat", value: .number("1458252000")),
        ]
        if let expires { claims.append(JSONMember(name: "exp", value: .number(String(expires.millisecondsSince1970 / 1000)))) }
        return try SoftwareStatementMinter.mint(claims: claims, keyID: "kid-1", key: key)
    }

    /// User metadata with one encrypted member.
    static let metadata =
        #"{"updated":1458252000,"encrypted":["userID"],"data":{"zip":["10001"],"userID":"ZW5jcnlwdGVk","maxRating":{"MPAA":"PG-13"}}}"#
}
