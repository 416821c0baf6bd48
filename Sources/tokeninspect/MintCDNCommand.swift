import CDNTokens
import EntitlementTokens

#if canImport(Glibc)
import Glibc
#endif

/// `mint cdn`: what `tokengate` would hand a viewer of a resource under a
/// CDN profile (docs/CDN.md), one item a line: the URL the player opens,
/// each cookie as `Set-Cookie: …`, each header as `Name: value`. The same
/// profile file and the same issuing code as the gate's exchange, so an
/// operator can check an edge's settings before any viewer does.
struct MintCDNCommand {
    static let command = CommandSpec(
        name: "cdn",
        abstract: "Print what the gate's CDN exchange hands out for a profile and a resource (signed URL, cookies, header).",
        discussion: """
            The profile is the file tokengate's --cdn-profile reads; a relative key path in it is read under \
            $CREDENTIALS_DIRECTORY when that is set, else from the working directory. Exits 2 when the profile \
            cannot be used, naming the setting and its line.
            """,
        options: [
            .option("profile", "FILE", help: "A CDN profile file (as tokengate --cdn-profile reads).", required: true, completion: .file),
            .option("resource", "ID", help: "The resource whose URL the profile names.", required: true),
            .option("now", "TIME", help: "Issue as at this time: ISO 8601, or epoch seconds or milliseconds (default: now)."),
            .option("client-ip", "IP", help: "The viewer's IP address, for a profile with bind-ip = true."),
            .option("requestor", "ID", help: "The requestor id a CAT names as its issuer when the profile sets no issuer."),
            .option(
                "lifetime",
                "SECONDS",
                help: "The lifetime in seconds when the profile sets none (the gate uses its session lifetime).",
                value: .integer,
                default: "14400"
            ),
            .option(
                "leeway",
                "SECONDS",
                help: "How far an edge's clock may run behind, in seconds (the gate's --leeway).",
                value: .integer,
                default: "30"
            ),
        ],
        run: { try MintCDNCommand($0).run() }
    )

    let profile: String
    let resource: String
    let now: String?
    let clientIP: String?
    let requestor: String?
    let lifetime: Int64
    let leeway: Int64

    init(_ parsed: ParsedArguments) throws {
        profile = parsed.required("profile")
        resource = parsed.required("resource")
        now = parsed.string("now")
        clientIP = parsed.string("client-ip")
        requestor = parsed.string("requestor")
        lifetime = parsed.requiredInteger("lifetime")
        leeway = parsed.requiredInteger("leeway")
        try validate()
    }

    func validate() throws {
        guard (1...CDNProfileSettings.maximumLifetime).contains(lifetime) else {
            throw ValidationError("--lifetime must be between 1 and \(CDNProfileSettings.maximumLifetime) seconds")
        }
        guard (0...86_400).contains(leeway) else { throw ValidationError("--leeway must be between 0 and 86400 seconds") }
    }

    func run() throws {
        let at = try now.map { try KeyOptions.parsedNow($0).timestamp } ?? TokenTimestamp.now()
        let grant: CDNGrant
        do {
            let set = try CDNProfileSet.load(
                paths: [profile],
                defaults: CDNProfileDefaults(lifetime: lifetime, leeway: leeway),
                credentialsDirectory: getenv("CREDENTIALS_DIRECTORY").map { String(cString: $0) }
            )
            // The gate signs a CAT's iss with its requestor id when the profile names no issuer; without one here
            // the answer would not be what the gate hands out.
            if set.profiles[0].kind == .cat, set.profiles[0].settings.issuer == nil, requestor == nil {
                throw ValidationError(
                    "--requestor: the CAT profile sets no issuer, and the gate writes its requestor id (tokengate --requestor) as iss"
                )
            }
            grant = try set.profiles[0].issue(resource: resource, now: at.millisecondsSince1970 / 1000, clientIP: clientIP, requestor: requestor)
        } catch let error as CDNProfileError {
            OutputStream.standardError.write("tokeninspect: error: \(TerminalText(escaping: error.message))\n")
            OutputStream.standardError.flush()
            throw ExitCode(2)
        } catch let error as CDNRefusal {
            OutputStream.standardError.write("tokeninspect: error: \(TerminalText(escaping: error.reason))\n")
            OutputStream.standardError.flush()
            throw ExitCode(2)
        }
        for line in grant.lines { OutputStream.standardOutput.write("\(TerminalText(escaping: line))\n") }
        OutputStream.standardOutput.flush()
    }
}
