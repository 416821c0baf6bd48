import EntitlementTokens

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// INPUTs and how to print the results, shared by `inspect` and `verify`.
struct InputOptions {
    static let arguments = [
        ArgumentSpec(valueName: "INPUT", help: "Tokens, @PATH files, or - for stdin.", isRepeating: true, completion: .input)
    ]
    static let options: [OptionSpec] = [
        .choice(
            "format",
            "format",
            OutputFormat.self,
            help: "Output: text for people, json (one array) or jsonl (one object per line).",
            default: .text
        ),
        .flag("show-signed-bytes", help: "Also print the exact bytes the signature covers."),
        .choice(
            "color",
            "color",
            ColorChoice.self,
            help: "Colour the text output: auto (a terminal, unless NO_COLOR is set or TERM=dumb), always or never.",
            default: .auto
        ),
        .repeating(
            "param",
            "NAME",
            help: "The query parameter that holds the token when a whole URL or query string is given. Repeatable. (default: token, then auth)"
        ),
    ]

    let inputs: [String]
    let format: OutputFormat
    let showSignedBytes: Bool
    let color: ColorChoice
    let parameterNames: [String]

    init(_ parsed: ParsedArguments) throws {
        inputs = parsed.arguments
        format = parsed.choice("format")
        showSignedBytes = parsed.flag("show-signed-bytes")
        color = parsed.choice("color")
        parameterNames = parsed.strings("param")
        try validate()
    }

    func validate() throws {
        if inputs.contains("@") { throw ValidationError("'@' names no file: write @PATH") }
        if parameterNames.contains(where: { $0.isEmpty || $0.contains("=") || $0.contains("&") }) {
            throw ValidationError("--param takes a parameter name (no '=' or '&')")
        }
    }

    /// How records are decoded: the parameters `--param` names, or the library's default.
    func decoderConfiguration(repairsSpacesAsPlus: Bool = false) -> DecoderConfiguration {
        var configuration = DecoderConfiguration()
        configuration.repairsSpacesAsPlus = repairsSpacesAsPlus
        if !parameterNames.isEmpty { configuration.queryParameterNames = parameterNames }
        return configuration
    }

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

/// Trusted keys and the clock, shared by `inspect` and `verify`.
struct KeyOptions {
    static let options: [OptionSpec] = [
        .repeating(
            "key",
            "PATH",
            help:
                "A trusted public key or certificate (PEM or DER), or a directory of them; for the SDK's other credentials also a JWKS or a PKCS#12 file. Repeatable.",
            completion: .file
        ),
        .option(
            "key-password-file",
            "FILE",
            help:
                "A file whose first line is the password of a PKCS#12 --key (software statements and signed requestor IDs only; else TOKENINSPECT_KEY_PASSWORD, a prompt on a terminal, or empty).",
            completion: .file
        ),
        .flag("allow-insecure-keys", help: "Accept RSA keys under 2048 bits (old deployments used RSA-1024)."),
        .flag("rsa-pss", help: "Verify with RSA keys as RSA-PSS (SHA-256) instead of PKCS#1 v1.5."),
        .flag("list-keys", help: "List the trusted keys loaded (type, file, SHA-256 fingerprint) on stderr."),
        .option(
            "now",
            "TIME",
            help:
                "The time to check against: ISO 8601, or an epoch number (up to 11 digits seconds, as date +%s prints, more milliseconds). (default: the current time)"
        ),
        // `--leeway -5` must reach the range check, not be taken for an option.
        .option("leeway", "SECONDS", help: "Tolerated clock skew each way, in seconds. (default: 30)", value: .number, takesDashedValue: true),
    ]

    let keys: [String]
    let keyPasswordFile: String?
    let allowInsecureKeys: Bool
    let rsaPss: Bool
    let listKeys: Bool
    let now: String?
    let leewayOption: Double?

    init(_ parsed: ParsedArguments) throws {
        keys = parsed.strings("key")
        keyPasswordFile = parsed.string("key-password-file")
        allowInsecureKeys = parsed.flag("allow-insecure-keys")
        rsaPss = parsed.flag("rsa-pss")
        listKeys = parsed.flag("list-keys")
        now = parsed.string("now")
        leewayOption = parsed.number("leeway")
        try validate()
    }

    /// Declared without a default so that help writes it once, as people say it.
    var leeway: Double { leewayOption ?? 30 }

    func validate() throws {
        if keyPasswordFile != nil && keys.isEmpty {
            throw ValidationError("--key-password-file opens a PKCS#12 --key, and no --key is given")
        }
        if let now { _ = try Self.parsedNow(now) }
        guard leeway >= 0, leeway.isFinite, leeway <= 86_400 * 365 else {
            throw ValidationError("--leeway must be between 0 and one year (31536000), in seconds")
        }
    }

    /// `--now` read by the library's one reading of "now" (docs/DESIGN.md#one-reading-of-now), which
    /// the gate and the debugger use too; `readAs` names the unit when it was
    /// a number (people cannot see which).
    static func parsedNow(_ text: String) throws -> (timestamp: TokenTimestamp, readAs: String?) {
        do {
            let now = try TokenDateParser.parseNow(text)
            return (now.timestamp, now.epochUnit?.rawValue)
        } catch {
            throw ValidationError("--now: \(error)")
        }
    }

    var nowTimestamp: TokenTimestamp { now.flatMap { try? Self.parsedNow($0).timestamp } ?? TokenTimestamp.now() }

    /// Says on stderr how an epoch `--now` was read, so a person can see
    /// whether seconds or milliseconds were meant.
    func announceNow() {
        guard let now, let parsed = try? Self.parsedNow(now), let readAs = parsed.readAs else { return }
        OutputStream.standardError.write("tokeninspect: note: now: \(parsed.timestamp.iso8601) (--now \(now) read as \(readAs))\n")
        OutputStream.standardError.flush()
    }

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
        errors.flush()
        SampleKeyWarning.write(ring.keys.map { SampleKeyWarning.Key(name: SampleKeys.name(of: $0), source: $0.source) })
        InsecureKeyWarning.write(
            ring.keys.filter { $0.bits < KeyLoadingOptions.minimumRSABits && $0.description.hasPrefix("RSA") }
                .map { (source: $0.source, description: "RSA-\($0.bits)") }
        )
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

struct JobOptions {
    static let options: [OptionSpec] = [
        .option(
            "jobs",
            "N",
            help: "Verify with N threads (1 to 256); output stays in input order.",
            value: .integer,
            default: "1",
            takesDashedValue: true
        )
    ]

    let jobs: Int

    init(_ parsed: ParsedArguments) throws {
        // Past Int's range is out of 1...256 as well.
        jobs = Int(clamping: parsed.requiredInteger("jobs"))
        try validate()
    }

    func validate() throws {
        guard (1...256).contains(jobs) else { throw ValidationError("--jobs must be between 1 and 256") }
    }
}
