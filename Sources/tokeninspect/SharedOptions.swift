import ArgumentParser
import EntitlementTokens

/// INPUTs and how to print the results, shared by `inspect` and `verify`.
struct InputOptions: ParsableArguments {
    @Argument(help: ArgumentHelp("Tokens, @PATH files, or - for stdin.", valueName: "INPUT"))
    var inputs: [String] = []

    @Option(help: "Output: text for people, json (one array) or jsonl (one object per line).")
    var format: OutputFormat = .text

    @Flag(help: "Also print the exact bytes the signature covers.")
    var showSignedBytes = false

    @Option(help: "Colour the text output: auto (a terminal, unless NO_COLOR is set or TERM=dumb), always or never.")
    var color: ColorChoice = .auto

    /// The sources to read; stdin when none is given and stdin is not a terminal.
    func sources() throws -> [InputSource] {
        if inputs.isEmpty {
            guard !Terminal.current.stdinIsTerminal else {
                throw ValidationError("no INPUT given: pass a token, @FILE, or - (stdin)")
            }
            return [.standardInput]
        }
        return inputs.enumerated().map { InputSource(argument: $1, position: $0 + 1) }
    }
}

extension OutputFormat: ExpressibleByArgument {}

/// Trusted keys and the clock, shared by `inspect` and `verify`.
struct KeyOptions: ParsableArguments {
    @Option(name: .customLong("key"), help: ArgumentHelp(
        "A trusted public key or certificate (PEM or DER), or a directory of them. Repeatable.", valueName: "PATH"))
    var keys: [String] = []

    @Flag(help: "Accept RSA keys under 2048 bits (old deployments used RSA-1024).")
    var allowInsecureKeys = false

    @Flag(help: "Verify with RSA keys as RSA-PSS (SHA-256) instead of PKCS#1 v1.5.")
    var rsaPss = false

    @Flag(help: "List the trusted keys loaded (type, file, SHA-256 fingerprint) on stderr.")
    var listKeys = false

    @Option(help: ArgumentHelp("The time to check against: ISO 8601 or epoch milliseconds (default: now).", valueName: "TIME"))
    var now: String?

    @Option(help: ArgumentHelp("Tolerated clock skew each way, in seconds.", valueName: "SECONDS"))
    var leeway: Double = 30

    func validate() throws {
        if let now { _ = try parsedNow(now) }
        guard leeway >= 0, leeway.isFinite, leeway <= 86_400 * 365 else {
            throw ValidationError("--leeway must be between 0 and one year, in seconds")
        }
    }

    func parsedNow(_ text: String) throws -> TokenTimestamp {
        do {
            return try TokenDateParser.parseAllowingEpochMilliseconds(text).timestamp
        } catch {
            throw ValidationError("--now: \(error)")
        }
    }

    var nowTimestamp: TokenTimestamp { now.flatMap { try? parsedNow($0) } ?? TokenTimestamp.now() }

    /// Loads every key, or exits 2 naming the key that could not be used.
    ///
    /// What loading skipped (a README or private key in a key directory, an
    /// expired certificate) and, with `--list-keys`, the keys themselves go
    /// to stderr, so stdout stays the verdicts in every `--format`. File
    /// names are input: they are escaped like token text.
    func keyRing() throws -> KeyRing? {
        guard !keys.isEmpty else { return nil }
        let errors = OutputStream.standardError
        let ring: KeyRing
        do {
            ring = try KeyRing.load(
                paths: keys,
                options: KeyLoadingOptions(allowsInsecureKeySizes: allowInsecureKeys, treatsRSAKeysAsPSS: rsaPss),
                now: nowTimestamp
            )
        } catch {
            errors.write("tokeninspect: error: \(error.message)\n")
            errors.flush()
            throw ExitCode(2)
        }
        for notice in ring.notices {
            errors.write("tokeninspect: \(notice.severity.rawValue): \(notice.message)\n")
        }
        if listKeys {
            for (index, key) in ring.keys.enumerated() {
                var line = "tokeninspect: key \(index + 1) of \(ring.keys.count): \(key.description)"
                if let validity = key.certificateValidity {
                    line += ", certificate valid \(validity.notBefore.iso8601) to \(validity.notAfter.iso8601)"
                }
                errors.write("\(line)\n")
            }
        }
        errors.flush()
        return ring
    }
}

struct JobOptions: ParsableArguments {
    @Option(help: "Verify with N threads; output stays in input order.")
    var jobs: Int = 1

    func validate() throws {
        guard (1...256).contains(jobs) else { throw ValidationError("--jobs must be between 1 and 256") }
    }
}
