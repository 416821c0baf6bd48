import CDNTokens
import EntitlementTokens

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
            CDNIssuing.nowOption,
            CDNIssuing.clientIPOption,
            CDNIssuing.requestorOption,
            CDNIssuing.lifetimeOption,
            CDNIssuing.leewayOption,
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
        try CDNIssuing.checkLifetime(lifetime, option: "lifetime")
        try CDNIssuing.checkLeeway(leeway)
    }

    func run() throws {
        let at = try now.map { try KeyOptions.parsedNow($0).timestamp } ?? TokenTimestamp.now()
        let grant: CDNGrant
        do {
            let profile = try CDNIssuing.profile(self.profile, lifetime: lifetime, leeway: leeway, requestor: requestor)
            grant = try profile.issue(resource: resource, now: at.millisecondsSince1970 / 1000, clientIP: clientIP, requestor: requestor)
        } catch let error as CDNProfileError {
            throw CDNIssuing.failure(TerminalText(escaping: error.message))
        } catch let error as CDNRefusal {
            throw CDNIssuing.failure(TerminalText(escaping: error.reason))
        }
        for line in grant.lines { OutputStream.standardOutput.write("\(TerminalText(escaping: line))\n") }
        OutputStream.standardOutput.flush()
    }
}
