import ArgumentParser
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
struct MintCDNCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cdn",
        abstract: "Print what the gate's CDN exchange hands out for a profile and a resource (signed URL, cookies, header).",
        discussion: """
            The profile is the file tokengate's --cdn-profile reads; a relative key path in it is read under \
            $CREDENTIALS_DIRECTORY when that is set, else from the working directory. Exits 2 when the profile \
            cannot be used, naming the setting and its line.
            """
    )

    @Option(help: ArgumentHelp("A CDN profile file (as tokengate --cdn-profile reads).", valueName: "FILE"), completion: .file())
    var profile: String

    @Option(help: ArgumentHelp("The resource whose URL the profile names.", valueName: "ID"))
    var resource: String

    @Option(help: ArgumentHelp("Issue as at this time: ISO 8601, or epoch seconds or milliseconds (default: now).", valueName: "TIME"))
    var now: String?

    @Option(help: ArgumentHelp("The viewer's IP address, for a profile with bind-ip = true.", valueName: "IP"))
    var clientIP: String?

    @Option(help: ArgumentHelp("The requestor id a CAT names as its issuer when the profile sets no issuer.", valueName: "ID"))
    var requestor: String?

    @Option(help: ArgumentHelp("The lifetime in seconds when the profile sets none (the gate uses its session lifetime).", valueName: "SECONDS"))
    var lifetime: Int64 = 14_400

    @Option(help: ArgumentHelp("How far an edge's clock may run behind, in seconds (the gate's --leeway).", valueName: "SECONDS"))
    var leeway: Int64 = 30

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
            let set = try CDNProfileSet.load(paths: [profile], defaults: CDNProfileDefaults(lifetime: lifetime, leeway: leeway),
                                             credentialsDirectory: getenv("CREDENTIALS_DIRECTORY").map { String(cString: $0) })
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
