import CDNTokens
import EntitlementTokens
import HARReport

#if canImport(Glibc)
import Glibc
#endif

/// `har`: a customer's capture read streamed, every credential in it judged at
/// its entry's time, the chain and the findings (docs/HAR.md,
/// docs/DESIGN.md#reading-a-capture). The file is read 64 KiB at a time and
/// each entry forgotten once its credentials are found, so memory stays flat
/// whatever the capture's size.
struct HARCommand {
    static let command = CommandSpec(
        name: "har",
        abstract: "Read a HAR capture: every credential on a timeline, judged at its entry's time, and where playback broke.",
        discussion: """
            Every credential of this toolkit's kinds is found in the requests (URL, headers, cookies, body) and the \
            answers (headers, Set-Cookie, text bodies): TV Everywhere tokens, CDN tokens, the gate's sessions and its \
            X-Token-Status. Each is judged at its entry's startedDateTime with the keys given; without one it is \
            NOT_CHECKED, never valid. Exit status 0 when no finding names a failure, 1 when one does, 2 when a key or \
            the file cannot be read, 64 for a usage error, 65 for a file that is not a HAR.
            """,
        options: [
            .repeating(
                "key",
                "PATH",
                help: "A programmer's public key or certificate (PEM or DER), or a directory of them, for the TV Everywhere tokens. Repeatable.",
                completion: .file
            ),
            .repeating(
                "profile",
                "FILE",
                help: "A CDN profile (as tokengate --cdn-profile reads it): the keys of its kind's tokens. Repeatable, one per kind.",
                completion: .file
            ),
            .repeating(
                "cat-key",
                "FILE [ID]",
                help:
                    "A key Common Access Tokens are verified with at the origin (as tokengate serve --cat-key reads it: a hex HMAC key or a PEM EC key, 'FILE ID' for a kid). Repeatable.",
                completion: .file
            ),
            .repeating(
                "session-secret",
                "FILE",
                help:
                    "A file holding the gate's playback session secret (as tokengate serve --session-secret reads it, at least 32 bytes). Repeatable: every one verifies.",
                completion: .file
            ),
            .flag("allow-insecure-keys", help: "Accept RSA keys under 2048 bits (old deployments used RSA-1024)."),
            .option(
                "leeway",
                "SECONDS",
                help: "Tolerated clock skew each way, in seconds.",
                value: .integer,
                default: "30",
                takesDashedValue: true
            ),
            .choice(
                "format",
                "FORMAT",
                HARFormat.self,
                help: "text for a person, json for a script (one object), html for a ticket (one self-contained page, the timeline as SVG).",
                default: .text
            ),
            .option(
                "output",
                "FILE",
                help: "Write the report to FILE instead of stdout (any format; meant for --format html).",
                completion: .file
            ),
            .option(
                "redact",
                "OUT",
                help:
                    "Also write the HAR to OUT with every credential, cookie, Authorization and password value replaced by REDACTED-<kind>-<8 hex of its SHA-256>. Needs FILE, not -.",
                completion: .file
            ),
        ],
        arguments: [ArgumentSpec(valueName: "FILE", help: "The HAR file, or - for stdin.")],
        run: { try HARCommand($0).run() }
    )

    enum HARFormat: String, CaseIterable {
        case text, json, html
    }

    let file: String
    let keyPaths: [String]
    let profilePaths: [String]
    let catKeyFiles: [CATKeyFile]
    let sessionSecretPaths: [String]
    let allowInsecureKeys: Bool
    let leeway: Int64
    let format: HARFormat
    let redact: String?
    let output: String?

    init(_ parsed: ParsedArguments) throws {
        guard parsed.arguments.count == 1 else { throw ValidationError("give one HAR FILE, or - for stdin") }
        file = parsed.arguments[0]
        keyPaths = parsed.strings("key")
        profilePaths = parsed.strings("profile")
        let credentialsDirectory = getenv("CREDENTIALS_DIRECTORY").map { String(cString: $0) }
        var catKeyFiles: [CATKeyFile] = []
        for text in parsed.strings("cat-key") {
            do { catKeyFiles.append(try CATKeyFile(text, credentialsDirectory: credentialsDirectory)) } catch {
                throw ValidationError(error.message)
            }
        }
        self.catKeyFiles = catKeyFiles
        sessionSecretPaths = parsed.strings("session-secret").map { SecretFileBytes.path($0, credentialsDirectory: credentialsDirectory) }
        allowInsecureKeys = parsed.flag("allow-insecure-keys")
        leeway = parsed.requiredInteger("leeway")
        format = parsed.choice("format")
        redact = parsed.string("redact")
        output = parsed.string("output")
        if let output, output == file || output == redact {
            throw ValidationError("--output writes the report: give another path than the HAR's or --redact's")
        }
        if redact != nil, file == "-" { throw ValidationError("--redact reads the HAR twice: give a FILE, not -") }
        if let redact, redact == file { throw ValidationError("--redact writes a new file: give another path than the HAR's") }
        guard (0...86_400).contains(leeway) else { throw ValidationError("--leeway must be between 0 and 86400 seconds") }
    }

    func run() throws {
        let keys = HARKeys(
            tokenKeys: try loadTokenKeys(),
            profiles: try loadProfiles(),
            catKeys: try loadCATKeys(),
            sessionSecrets: try loadSessionSecrets(),
            leewaySeconds: leeway
        )
        var reader = HARReader()
        var analysis = HARAnalysis(keys: keys, gathersSecrets: redact != nil)
        do {
            try Self.read(file) { chunk in
                try reader.feed(chunk) { analysis.add($0) }
            }
            try reader.finish { analysis.add($0) }
        } catch let error as HARReadError {
            Self.error("\(TerminalText(escaping: file == "-" ? "stdin" : file)): \(TerminalText(escaping: error.description))")
            throw ExitCode(65)  // not a HAR: sysexits' EX_DATAERR
        } catch let error as InputSource.Unreadable {
            Self.error(TerminalText(escaping: error.description))
            throw ExitCode(2)
        }
        let report = analysis.finish(readerNotes: reader.notes)
        if let redact, let secrets = analysis.secrets { try Self.writeRedacted(file, to: redact, secrets: secrets) }
        let source = file == "-" ? "stdin" : file
        let rendered: [UInt8] =
            switch format {
            case .text: Array(HARReportText(report: report, source: source).text.rendered.utf8)
            case .json: HARReportJSON.encoded(report)
            case .html: HARReportHTML(report: report, source: source).bytes
            }
        if let output {
            try Self.write(rendered, to: output)
        } else {
            rendered.withUnsafeBytes { OutputStream.standardOutput.write($0) }
            OutputStream.standardOutput.flush()
        }
        if report.hasFailure { throw ExitCode(1) }
    }

    /// Reads `path` (or stdin for `-`) 64 KiB at a time, handing each chunk over.
    static func read(_ path: String, _ body: (Span<UInt8>) throws -> Void) throws {
        let descriptor: Int32
        if path == "-" {
            descriptor = STDIN_FILENO
        } else {
            descriptor = open(path, O_RDONLY)
            guard descriptor >= 0 else { throw InputSource.Unreadable(description: "cannot read \(path): \(String(cString: strerror(errno)))") }
            var info = stat()
            if fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR {
                close(descriptor)
                throw InputSource.Unreadable(description: "cannot read \(path): it is a directory")
            }
        }
        defer { if descriptor != STDIN_FILENO { close(descriptor) } }
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw InputSource.Unreadable(description: "cannot read \(path == "-" ? "stdin" : path): \(String(cString: strerror(errno)))")
            }
            if count == 0 { return }
            try body(chunk.span.extracting(..<count))
        }
    }

    /// The report to a new file (or one replaced whole); exit 2 when it cannot be written.
    static func write(_ bytes: [UInt8], to path: String) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard descriptor >= 0 else {
            error("--output: cannot write \(TerminalText(escaping: path)): \(String(cString: strerror(errno)))")
            throw ExitCode(2)
        }
        defer { close(descriptor) }
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else {
                error("--output: cannot write \(TerminalText(escaping: path)): \(String(cString: strerror(errno)))")
                throw ExitCode(2)
            }
            offset += count
        }
    }

    /// The second reading: the same bytes, every secret replaced, to a new file
    /// (mode 0600: it is still a viewer's capture). Nothing is written when the
    /// capture holds more secrets than can be searched for at once.
    static func writeRedacted(_ path: String, to output: String, secrets: HARSecrets) throws {
        guard !secrets.overflowed else {
            error(
                "--redact: the capture holds more than \(HARSecrets.maximumValues) distinct secrets (or \(HARSecrets.maximumBytes) bytes of them); nothing was written"
            )
            throw ExitCode(2)
        }
        let descriptor = open(output, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard descriptor >= 0 else {
            error("--redact: cannot write \(TerminalText(escaping: output)): \(String(cString: strerror(errno)))")
            throw ExitCode(2)
        }
        defer { close(descriptor) }
        var writer = HARRedactingWriter(secrets: secrets.values)
        func write(_ bytes: Span<UInt8>) throws {
            var failed = false
            bytes.withUnsafeBytes { raw in
                var offset = 0
                while offset < raw.count {
                    let count = Glibc.write(descriptor, raw.baseAddress! + offset, raw.count - offset)
                    if count < 0, errno == EINTR { continue }
                    if count <= 0 {
                        failed = true
                        return
                    }
                    offset += count
                }
            }
            if failed {
                error("--redact: cannot write \(TerminalText(escaping: output)): \(String(cString: strerror(errno)))")
                throw ExitCode(2)
            }
        }
        do {
            try read(path) { chunk in try writer.feed(chunk, to: write) }
            try writer.finish(to: write)
        } catch let unreadable as InputSource.Unreadable {
            error(TerminalText(escaping: unreadable.description))
            throw ExitCode(2)
        }
    }

    private func loadTokenKeys() throws -> KeyRing? {
        guard !keyPaths.isEmpty else { return nil }
        do {
            let ring = try KeyRing.load(
                paths: keyPaths,
                options: KeyLoadingOptions(allowsInsecureKeySizes: allowInsecureKeys),
                now: TokenTimestamp.now()
            )
            for notice in ring.notices {
                OutputStream.standardError.write("tokeninspect: \(notice.severity.rawValue): \(notice.message)\n")
            }
            OutputStream.standardError.flush()
            return ring
        } catch {
            Self.error(TerminalText(escaping: error.message))
            throw ExitCode(2)
        }
    }

    /// `--cat-key`'s keys, read as the gate reads them; exit 2 naming the file when one cannot be used.
    private func loadCATKeys() throws -> [CATKey] {
        var keys: [CATKey] = []
        for file in catKeyFiles {
            do { keys.append(try file.load()) } catch {
                Self.error(TerminalText(escaping: error.message))
                throw ExitCode(2)
            }
        }
        return keys
    }

    /// `--session-secret`'s secrets, read as the gate reads them (docs/DESIGN.md#secret-files);
    /// exit 2 naming the file when one cannot be used.
    private func loadSessionSecrets() throws -> PlaybackSessionSecrets? {
        guard !sessionSecretPaths.isEmpty else { return nil }
        do { return try PlaybackSessionSecrets.load(paths: sessionSecretPaths) } catch {
            Self.error(TerminalText(escaping: error.message))
            throw ExitCode(2)
        }
    }

    private func loadProfiles() throws -> [CDNProfile] {
        guard !profilePaths.isEmpty else { return [] }
        let profiles: [CDNProfile]
        do {
            profiles = try CDNProfileSet.load(
                paths: profilePaths,
                defaults: CDNProfileDefaults(lifetime: 14_400, leeway: leeway),
                credentialsDirectory: getenv("CREDENTIALS_DIRECTORY").map { String(cString: $0) }
            ).profiles
        } catch {
            Self.error(TerminalText(escaping: error.message))
            throw ExitCode(2)
        }
        var kinds: Set<CDNTokenKind> = []
        for profile in profiles where !kinds.insert(profile.kind).inserted {
            Self.error("two --profile files for \(profile.kind.rawValue) tokens: give one per kind")
            throw ExitCode(64)
        }
        return profiles
    }

    static func error(_ message: TerminalText) {
        OutputStream.standardError.write("tokeninspect: error: \(message)\n")
        OutputStream.standardError.flush()
    }
}
