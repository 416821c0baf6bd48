import EntitlementTokens

#if canImport(Glibc)
import Glibc
#endif

/// `mint software-statement`: a JWS (docs/DESIGN.md#software-statements) signed with a private key, for
/// tests and staging registration servers. The key decides `alg` (RSA → RS256,
/// P-256 → ES256, Ed25519 → EdDSA).
struct MintSoftwareStatementCommand {
    static let command = CommandSpec(
        name: "software-statement",
        abstract: "Issue a signed software statement (a JWS: RS256 with an RSA key, ES256 with a P-256 key, EdDSA with Ed25519).",
        discussion: """
            Claims are written in this order: software_id, software_version, iss, sub, aud, iat, exp, jti, \
            then every --claim as given. --jwks-out writes the JWKS that verifies the statement \
            (give it to verify with --key).
            """,
        options: MintSigningKeyOptions.options + [
            .option("kid", "KID", help: "The key id written in the header (kid)."),
            .option("software-id", "ID", help: "The software_id claim."),
            .option("software-version", "VERSION", help: "The software_version claim."),
            .option("iss", "ISSUER", help: "The iss claim."),
            .option("sub", "SUBJECT", help: "The sub claim."),
            .repeating("aud", "AUDIENCE", help: "An aud value. Repeatable (several make an array)."),
            .option("issue-time", "TIME", help: "The iat claim: ISO 8601 or epoch seconds. (default: the current time)"),
            .option("ttl", "TTL", help: "Lifetime from iat, for exp: seconds, or a number with s, min, h or d. (default: no exp)"),
            .option("jti", "ID", help: "The jti claim. (default: none)"),
            .repeating(
                "claim",
                "NAME=VALUE",
                help:
                    "Another claim, NAME=VALUE: VALUE as JSON when it is a JSON number, true, false, null, array or object, else as a string. Repeatable."
            ),
            .option("jwks-out", "PATH", help: "Also write the JWKS of the public key (with --kid) to this file.", completion: .file),
        ],
        run: { try MintSoftwareStatementCommand($0).run() }
    )

    let signing: MintSigningKeyOptions
    let kid: String?
    let softwareId: String?
    let softwareVersion: String?
    let iss: String?
    let sub: String?
    let aud: [String]
    let issueTime: String?
    let ttl: String?
    let jti: String?
    let claims: [String]
    let jwksOut: String?

    init(_ parsed: ParsedArguments) throws {
        signing = MintSigningKeyOptions(parsed)
        kid = parsed.string("kid")
        softwareId = parsed.string("software-id")
        softwareVersion = parsed.string("software-version")
        iss = parsed.string("iss")
        sub = parsed.string("sub")
        aud = parsed.strings("aud")
        issueTime = parsed.string("issue-time")
        ttl = parsed.string("ttl")
        jti = parsed.string("jti")
        claims = parsed.strings("claim")
        jwksOut = parsed.string("jwks-out")
        try validate()
    }

    func validate() throws {
        guard ttl.map({ Self.seconds($0) != nil }) ?? true else {
            throw ValidationError("--ttl must be seconds, or a number with s, min, h or d")
        }
        if let issueTime, Self.epochSeconds(issueTime) == nil {
            throw ValidationError("--issue-time must be ISO 8601 or epoch seconds")
        }
        var names = Set(["software_id", "software_version", "iss", "sub", "aud", "iat", "exp", "jti"])
        for claim in claims {
            guard let equals = claim.firstIndex(of: "="), equals != claim.startIndex else {
                throw ValidationError("--claim takes NAME=VALUE, got \(TerminalText.quoted(claim))")
            }
            let name = String(claim[..<equals])
            guard names.insert(name).inserted else {
                throw ValidationError(
                    "--claim \(TerminalText.quoted(name)) is given twice or set by its own option; a statement names each claim once"
                )
            }
        }
    }

    func run() throws {
        let signingKey = try signing.load()
        let issued = issueTime.flatMap(Self.epochSeconds) ?? TokenTimestamp.now().millisecondsSince1970 / 1000
        var members: [JSONMember] = []
        func add(_ name: String, _ value: String?) {
            if let value { members.append(JSONMember(name: name, value: .string(value))) }
        }
        add("software_id", softwareId)
        add("software_version", softwareVersion)
        add("iss", iss)
        add("sub", sub)
        if aud.count == 1 { add("aud", aud[0]) }
        if aud.count > 1 { members.append(JSONMember(name: "aud", value: .array(aud.map { .string($0) }))) }
        members.append(JSONMember(name: "iat", value: .number(String(issued))))
        if let ttl, let lifetime = Self.seconds(ttl) {
            let (expires, overflow) = issued.addingReportingOverflow(lifetime)
            guard !overflow else { throw ValidationError("--ttl is too long") }
            members.append(JSONMember(name: "exp", value: .number(String(expires))))
        }
        add("jti", jti)
        for claim in claims {
            let equals = claim.firstIndex(of: "=")!
            let text = String(claim[claim.index(after: equals)...])
            members.append(JSONMember(name: String(claim[..<equals]), value: Self.claimValue(text)))
        }
        do {
            print(try SoftwareStatementMinter.mint(claims: members, keyID: kid, key: signingKey))
            if let jwksOut {
                let algorithm = SoftwareStatementMinter.algorithm(for: signingKey)
                guard let jwk = JSONWebKeySet.publicJWK(of: signingKey.publicKey, keyID: kid, algorithm: algorithm) else {
                    throw ValidationError("this key cannot be written as a JWK")
                }
                let document = JSONWebKeySet.document(of: [jwk]).encoded + [0x0A]
                guard let file = fopen(jwksOut, "wb"), fwrite(document, 1, document.count, file) == document.count, fclose(file) == 0 else {
                    OutputStream.standardError.write("tokeninspect: error: cannot write \(jwksOut)\n")
                    OutputStream.standardError.flush()
                    throw ExitCode(2)
                }
            }
        } catch let error as KeyError {
            OutputStream.standardError.write("tokeninspect: error: \(error.message)\n")
            OutputStream.standardError.flush()
            throw ExitCode(1)
        }
    }

    /// A claim's value: JSON when it reads as a JSON number, literal, array or
    /// object (by the library's strict reader), else the text as a string.
    static func claimValue(_ text: String) -> JSONValue {
        if let wrapped = try? JSONValue.readObject(Array("{\"v\":\(text)}".utf8)), let value = wrapped["v"] {
            return value
        }
        return .string(text)
    }

    /// `3600`, `3600s`, `60min`, `2h`, `30d`.
    static func seconds(_ text: String) -> Int64? {
        let units: [(String, Int64)] = [("min", 60), ("s", 1), ("h", 3600), ("d", 86_400)]
        for (suffix, factor) in units where text.hasSuffix(suffix) {
            guard let value = Int64(text.dropLast(suffix.count)), value >= 0 else { return nil }
            let (product, overflow) = value.multipliedReportingOverflow(by: factor)
            return overflow ? nil : product
        }
        guard let value = Int64(text), value >= 0 else { return nil }
        return value
    }

    /// Epoch seconds from a decimal number or any date the token reader takes.
    static func epochSeconds(_ text: String) -> Int64? {
        if let seconds = Int64(text) { return seconds }
        return (try? TokenDateParser.parse(text))?.timestamp.millisecondsSince1970.dividedRoundingDown(by: 1000)
    }
}

extension Int64 {
    fileprivate func dividedRoundingDown(by divisor: Int64) -> Int64 {
        let quotient = self / divisor
        return (self % divisor != 0 && self < 0) ? quotient - 1 : quotient
    }
}
