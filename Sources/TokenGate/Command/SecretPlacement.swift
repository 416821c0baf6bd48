import EntitlementTokens
import EntitlementTokensRedis

/// Where the gate lets a secret stand (docs/DESIGN.md#secrets): in a file only
/// the service user can read, never in an argument (every user sees those in
/// `ps` and `/proc/<pid>/cmdline`) and never in a settings file others can
/// read. The library still takes a password inside a URL; the gate refuses
/// one in those two places and names the fix.
enum SecretPlacement {
    /// Refuses a `--replay` on the command line (`arguments` as the process
    /// was given them, before a settings file is expanded) that holds a secret.
    static func checkArguments(_ arguments: [String]) throws(GateConfigurationError) {
        for value in replayValues(in: arguments) {
            let secrets = RedisInlineSecret.found(in: value)
            guard !secrets.isEmpty else { continue }
            throw GateConfigurationError(
                "--replay holds \(list(secrets, \.placeDescription)) on the command line, "
                    + "where every user of the machine can read it (ps): " + fix(secrets)
            )
        }
    }

    /// Refuses a settings file that others can read (any group or other
    /// permission bit: `mode & 0o077 != 0`) while its settings hold a secret.
    /// `permissions` is the file's mode, nil when it cannot be read.
    static func checkSettingsFile(_ path: String, settings: [String], permissions: Int?) throws(GateConfigurationError) {
        for value in replayValues(in: settings) {
            let secrets = RedisInlineSecret.found(in: value)
            guard !secrets.isEmpty else { continue }
            guard let permissions else {
                throw GateConfigurationError(
                    "--config \(TerminalText.escaped(path)): replay holds \(list(secrets, \.placeDescription)) "
                        + "and who may read the file cannot be checked: " + fix(secrets)
                )
            }
            guard permissions & 0o077 != 0 else { continue }
            throw GateConfigurationError(
                "--config \(TerminalText.escaped(path)): replay holds \(list(secrets, \.placeDescription)) "
                    + "and the file is readable by others (mode \(String(permissions & 0o777, radix: 8))): "
                    + "chmod 600 it, owned by the service user, or better " + fix(secrets)
            )
        }
    }

    /// The values of `--replay VALUE` and `--replay=VALUE`, up to a `--`.
    static func replayValues(in arguments: [String]) -> [String] {
        var values: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if argument == "--" { break }
            if argument == "--replay", index + 1 < arguments.count {
                values.append(arguments[index + 1])
                index += 2
                continue
            }
            if argument.hasPrefix("--replay=") { values.append(String(argument.dropFirst("--replay=".count))) }
            index += 1
        }
        return values
    }

    private static func fix(_ secrets: [RedisInlineSecret]) -> String {
        "put each secret in a file only the service user can read and name it with "
            + secrets.map { $0.fileParameter + "PATH" }.joined(separator: " and ")
            + " (a relative path is read under $CREDENTIALS_DIRECTORY, where the unit's LoadCredential= puts it)"
    }

    private static func list(_ secrets: [RedisInlineSecret], _ text: (RedisInlineSecret) -> String) -> String {
        secrets.map(text).joined(separator: " and ")
    }
}
