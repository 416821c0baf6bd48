import CDNTokens
import EntitlementTokens

#if canImport(Glibc)
import Glibc
#endif

/// What `mint cdn` and `manifest` share: a profile file issued from as the
/// gate's exchange issues from it, with the gate's own defaults for what the
/// profile leaves unset, so both commands show what a viewer would be handed.
enum CDNIssuing {
    static let nowOption = OptionSpec.option(
        "now",
        "TIME",
        help: "Issue as at this time: ISO 8601, or epoch seconds or milliseconds (default: now)."
    )
    static let clientIPOption = OptionSpec.option("client-ip", "IP", help: "The viewer's IP address, for a profile with bind-ip = true.")
    static let requestorOption = OptionSpec.option(
        "requestor",
        "ID",
        help: "The requestor id a CAT names as its issuer when the profile sets no issuer."
    )
    static let lifetimeOption = OptionSpec.option(
        "lifetime",
        "SECONDS",
        help: "The lifetime in seconds when the profile sets none (the gate uses its session lifetime).",
        value: .integer,
        default: "14400"
    )
    static let leewayOption = OptionSpec.option(
        "leeway",
        "SECONDS",
        help: "How far an edge's clock may run behind, in seconds (the gate's --leeway).",
        value: .integer,
        default: "30"
    )

    /// Refuses a lifetime (`--lifetime`, `--session-lifetime`) a profile would refuse.
    static func checkLifetime(_ seconds: Int64, option: String) throws {
        guard (1...CDNProfileSettings.maximumLifetime).contains(seconds) else {
            throw ValidationError("--\(option) must be between 1 and \(CDNProfileSettings.maximumLifetime) seconds")
        }
    }

    /// Refuses a leeway the gate's `--leeway` would refuse.
    static func checkLeeway(_ seconds: Int64) throws {
        guard (0...86_400).contains(seconds) else { throw ValidationError("--leeway must be between 0 and 86400 seconds") }
    }

    /// The profile of the file at `path`, read as the gate reads it (a
    /// relative key path under `$CREDENTIALS_DIRECTORY` when that is set).
    /// A CAT profile that names no issuer needs `requestor`: the gate signs
    /// a CAT's `iss` with its requestor id, and without one the answer would
    /// not be what the gate hands out.
    static func profile(_ path: String, lifetime: Int64, leeway: Int64, requestor: String?) throws -> CDNProfile {
        let set = try CDNProfileSet.load(
            paths: [path],
            defaults: CDNProfileDefaults(lifetime: lifetime, leeway: leeway),
            credentialsDirectory: getenv("CREDENTIALS_DIRECTORY").map { String(cString: $0) }
        )
        let profile = set.profiles[0]
        if profile.kind == .cat, profile.settings.issuer == nil, requestor == nil {
            throw ValidationError("--requestor: the CAT profile sets no issuer, and the gate writes its requestor id (tokengate --requestor) as iss")
        }
        return profile
    }

    /// `tokeninspect: error: …` on stderr, and exit status 2: the profile,
    /// its keys or the input cannot be used.
    static func failure(_ message: TerminalText) -> ExitCode {
        OutputStream.standardError.write("tokeninspect: error: \(message)\n")
        OutputStream.standardError.flush()
        return ExitCode(2)
    }
}
