import EntitlementTokens

/// `mint token`, also what a bare `mint` runs (the group's default), so
/// `tokeninspect mint --key … --requestor …` works as it always has.
struct MintTokenCommand {
    static let command = CommandSpec(
        name: "token",
        abstract: "Issue a signed token (for tests, samples and staging servers).",
        usage: """
            tokeninspect mint --key <PRIVATE_PEM> --requestor <ID> --resource <ID> [<options>]
            tokeninspect mint --kind authentication --key <PRIVATE_PEM> --requestor <ID> [<options>]
            """,
        discussion: """
            Signs the token element's exact bytes with the private key, like a real issuer. \
            --resource is required for media and authorization tokens.
            """,
        options: MintSigningKeyOptions.options + [
            .choice("kind", "kind", TokenKindArgument.self, help: "The kind of token.", default: .media),
            .option(
                "root",
                "root",
                help: "Root element of a media token: authToken (what servers send) or shortAuthorizationToken.",
                default: "authToken"
            ),
            .option("requestor", "ID", help: "The requestor id.", required: true),
            .option("resource", "ID", help: "The resource: a bare id or a Media RSS document (required for media and authorization tokens)."),
            .option("mvpd", "ID", help: "The MVPD id."),
            .option("proxy-mvpd", "ID", help: "The proxy MVPD id (media tokens)."),
            .option("session-guid", "GUID", help: "The session GUID (media) or authentication GUID. (default: a fresh random one, as issuers write)"),
            .option(
                "ttl",
                "TTL",
                help: "Lifetime from the issue time: milliseconds, or a number with ms, s, min or h. (default: 7min, as servers issue them)"
            ),
            .option("issue-time", "TIME", help: "Issue time: any token date shape, ISO 8601 or epoch milliseconds. (default: the current time)"),
            .option("fingerprint", "FP", help: "Device fingerprint, lowercase hex (authN/authZ)."),
            .option("device-id", "ID", help: "Device id, hashed with SHA-256 into the fingerprint (authN/authZ)."),
            .repeating("field", "PATH=VALUE", help: "An extra element, PATH=VALUE. Repeatable."),
            .flag("closed-signature", help: "Write <signatureInfo>…</signatureInfo> instead of the legacy unclosed form real servers emit."),
            .choice("encoding", "encoding", EncodingArgument.self, help: "How to write the token.", default: .raw),
            .flag("pretty", help: "Write the token element one field per line (the signature covers those exact bytes)."),
        ],
        run: { try MintTokenCommand($0).run() }
    )

    let signing: MintSigningKeyOptions
    let kind: TokenKindArgument
    let root: String
    let requestor: String
    let resource: String?
    let mvpd: String?
    let proxyMvpd: String?
    let sessionGuid: String?
    let ttl: String?
    let issueTime: String?
    let fingerprint: String?
    let deviceId: String?
    let fields: [String]
    let closedSignature: Bool
    let encoding: EncodingArgument
    let pretty: Bool

    init(_ parsed: ParsedArguments) throws {
        signing = MintSigningKeyOptions(parsed)
        kind = parsed.choice("kind")
        root = parsed.required("root")
        requestor = parsed.required("requestor")
        resource = parsed.string("resource")
        mvpd = parsed.string("mvpd")
        proxyMvpd = parsed.string("proxy-mvpd")
        sessionGuid = parsed.string("session-guid")
        ttl = parsed.string("ttl")
        issueTime = parsed.string("issue-time")
        fingerprint = parsed.string("fingerprint")
        deviceId = parsed.string("device-id")
        fields = parsed.strings("field")
        closedSignature = parsed.flag("closed-signature")
        encoding = parsed.choice("encoding")
        pretty = parsed.flag("pretty")
        try validate()
    }

    func validate() throws {
        guard Self.milliseconds(ttl ?? Self.defaultTTL) != nil else {
            throw ValidationError("--ttl must be milliseconds, or a number with ms, s, min or h")
        }
        if kind.value != .authentication && resource == nil { throw ValidationError("--resource is required for \(kind.rawValue) tokens") }
        guard MediaToken.Root(rawValue: root) != nil else { throw ValidationError("--root must be authToken or shortAuthorizationToken") }
        for field in fields {
            guard let equals = field.firstIndex(of: "=") else {
                throw ValidationError("--field takes PATH=VALUE, got \(TerminalText.quoted(field)) (no '=')")
            }
            let path = field[..<equals]
            guard !path.isEmpty else { throw ValidationError("--field \(TerminalText.quoted(field)): the PATH before '=' is empty") }
            if path.hasPrefix("@") || path.contains("/@") {
                throw ValidationError(
                    "--field \(TerminalText.quoted(field)): PATH \(TerminalText.quoted(path)) names an attribute; mint writes elements only"
                )
            }
        }
        if fingerprint != nil && deviceId != nil { throw ValidationError("give --fingerprint or --device-id, not both") }
        if let issueTime {
            // Read as --now is (its help's promise): a token date shape, ISO 8601, or an epoch number
            // (seconds up to 11 digits, milliseconds beyond).
            do { _ = try TokenDateParser.parseNow(issueTime) } catch { throw ValidationError("--issue-time: \(error)") }
        }
    }

    func run() throws {
        let signingKey = try signing.load()
        let issued = try issueTime.map { try TokenDateParser.parseNow($0).timestamp } ?? TokenTimestamp.now()
        var request = MintRequest(kind: kind.value, requestorID: requestor, resourceID: resource, issueTime: issued)
        request.mediaRoot = MediaToken.Root(rawValue: root) ?? .authToken
        request.mvpdID = mvpd
        request.proxyMvpdID = proxyMvpd
        if let sessionGuid { request.sessionGUID = sessionGuid }
        request.ttlMilliseconds = Self.milliseconds(ttl ?? Self.defaultTTL)!
        request.fingerprint = fingerprint ?? deviceId.flatMap { DeviceFingerprint.hash($0, hexLength: 64) }
        request.extraFields = fields.map { field in
            let parts = field.split(separator: "=", maxSplits: 1)
            return (String(parts[0]), parts.count > 1 ? String(parts[1]) : "")
        }
        request.signatureForm = closedSignature ? .closed : .legacy
        request.encoding = encoding.value
        request.prettyPrinted = pretty
        do {
            print(try TokenMinter.mint(request, key: signingKey))
        } catch let failure as TokenMinter.Failure {
            // The values asked for would make a malformed token: a usage error.
            OutputStream.standardError.write("tokeninspect: error: \(failure.description)\n")
            OutputStream.standardError.flush()
            throw ExitCode(64)
        } catch {
            OutputStream.standardError.write("tokeninspect: error: \(String(describing: error))\n")
            OutputStream.standardError.flush()
            throw ExitCode(1)
        }
    }

    /// Media tokens are issued for 7 minutes unless asked otherwise (docs/DESIGN.md#dates).
    static let defaultTTL = "7min"

    /// `420000`, `420000ms`, `420s`, `7min`, `2h`.
    static func milliseconds(_ text: String) -> Int64? {
        let units: [(String, Int64)] = [("ms", 1), ("min", 60_000), ("s", 1000), ("h", 3_600_000)]
        for (suffix, factor) in units where text.hasSuffix(suffix) {
            guard let value = Int64(text.dropLast(suffix.count)), value >= 0 else { return nil }
            let (product, overflow) = value.multipliedReportingOverflow(by: factor)
            return overflow ? nil : product
        }
        guard let value = Int64(text), value >= 0 else { return nil }
        return value
    }
}

enum TokenKindArgument: String, CaseIterable {
    case media, authentication, authorization
    var value: TokenKind { TokenKind(rawValue: rawValue)! }
}

enum EncodingArgument: String, CaseIterable {
    case raw, base64, base64url
    var value: MintRequest.Encoding { MintRequest.Encoding(rawValue: rawValue)! }
}
