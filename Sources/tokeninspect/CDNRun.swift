import CDNTokens
import EntitlementTokens

#if canImport(Glibc)
import Glibc
#endif

/// A run of `inspect` or `verify` over pasted CDN tokens
/// (docs/DESIGN.md#reading-cdn-tokens-back): each INPUT read whole, cut
/// into pastes (an argument is one paste; a file or stdin by
/// ``CDNPaste/records(in:)``), each paste read and — with `--key` or
/// `--profile` — verified against the URL asked for, the time and the
/// viewer's IP. A run is CDN tokens only, decided before any output, as a
/// credential run is.
struct CDNRun {
    var inputs: [(source: InputSource, bytes: [UInt8])]
    var kind: CDNTokenKind?
    var options: CDNOptions
    var keyPaths: [String]
    var verifying: Bool
    var format: OutputFormat
    var now: TokenTimestamp
    var leeway: Int64
    /// `--allow-insecure-keys`: a CloudFront key under 2048 bits is read (reading only), with a warning.
    var keyOptions = KeyLoadingOptions()
    var color: ColorChoice
    var terminal = Terminal.current

    /// Writes every report; returns the exit status of docs/DESIGN.md#exit-codes.
    func run() throws -> Int32 {
        let keys = try loadKeys()
        let output = OutputStream.standardOutput
        let style = TextStyle(colored: terminal.usesColor(color))
        var reports: [CDNReadingReport] = []
        for input in inputs {
            let text = String(decoding: input.bytes, as: UTF8.self)
            let pastes: [CDNPaste.Record]
            if case .literal = input.source {
                pastes = [CDNPaste.Record(line: 1, text: text)]
            } else {
                pastes = CDNPaste.records(in: text)
            }
            for paste in pastes {
                let report = try judge(paste, index: reports.count + 1, source: input.source.name, keys: keys)
                reports.append(report)
                switch format {
                case .text: output.write(CDNReportText(report: report, style: style, now: now, detailed: !verifying).text)
                case .jsonl: (report.json.encoded + [0x0A]).withUnsafeBytes { output.write($0) }
                case .json: break
                }
            }
        }
        if format == .json {
            // One array, one object a line, as the token and credential runs write it.
            CDNReadingReport.jsonArray(reports).withUnsafeBytes { output.write($0) }
        }
        output.flush()
        guard !reports.isEmpty else {
            OutputStream.standardError.write("tokeninspect: error: no CDN token found in the input\n")
            OutputStream.standardError.flush()
            return 2
        }
        let failures = reports.filter { verifying ? $0.status != .validToken : $0.status == .invalidTokenFormat }.count
        let stream = format == .text ? output : OutputStream.standardError
        stream.write(summary(reports, style: format == .text ? style : TextStyle(colored: false)) + "\n")
        stream.flush()
        return failures > 0 ? 1 : 0
    }

    /// Reads one paste, and verifies it when keys were given.
    private func judge(_ paste: CDNPaste.Record, index: Int, source: String, keys: Keys) throws -> CDNReadingReport {
        let reading: CDNReading
        do throws(CDNRefusal) {
            if let profile = keys.profile { reading = try profile.read(paste.text) } else { reading = try CDNReading(text: paste.text, kind: kind) }
        } catch {
            return CDNReadingReport(
                input: index,
                source: source,
                line: paste.line,
                reading: nil,
                refusal: error,
                verifiedWith: nil,
                url: try? options.requestURL?.get()
            )
        }
        let url: CDNURL?
        switch options.requestURL {
        case .failure(let refused)?:
            return CDNReadingReport(input: index, source: source, line: paste.line, reading: reading, refusal: refused, verifiedWith: nil, url: nil)
        case .success(let given)?: url = given
        case nil: url = reading.url
        }
        guard let verificationKeys = try keys.forKind(reading.kind) else {
            return CDNReadingReport(input: index, source: source, line: paste.line, reading: reading, refusal: nil, verifiedWith: nil, url: url)
        }
        let facts = CDNRequestFacts(url: url, now: now.millisecondsSince1970 / 1000, clientIP: options.clientIP, leeway: leeway)
        var refusal: CDNRefusal? = nil
        do { try reading.verify(keys: verificationKeys, facts: facts) } catch { refusal = error }
        return CDNReadingReport(
            input: index,
            source: source,
            line: paste.line,
            reading: reading,
            refusal: refusal,
            verifiedWith: verificationKeys.label,
            url: url
        )
    }

    /// `3 CDN tokens: 2 VALID_TOKEN, 1 URL_NOT_COVERED`, statuses in their declared order.
    private func summary(_ reports: [CDNReadingReport], style: TextStyle) -> TerminalText {
        var parts: [TerminalText] = []
        let undecided = reports.filter { $0.status == nil }.count
        if undecided > 0 { parts.append("\(undecided) DECODED") }
        for status in CDNStatus.allCases {
            let count = reports.filter { $0.status == status }.count
            if count > 0 { parts.append("\(count) " + CDNReportText.status(status, style: style)) }
        }
        return "\(reports.count) CDN token\(reports.count == 1 ? "" : "s"): " + TerminalText.joined(parts, separator: ", ")
    }

    // MARK: Keys

    /// The profile, or the `--key` file read as each kind needs it (once per kind).
    final class Keys {
        let profile: CDNProfile?
        let key: (path: String, bytes: [UInt8])?
        let keyID: String?
        let secureLinkExpression: String?
        let keyOptions: KeyLoadingOptions
        let catAudience: String?
        private var loaded: [CDNTokenKind: CDNVerificationKeys] = [:]

        init(
            profile: CDNProfile?,
            key: (path: String, bytes: [UInt8])?,
            keyID: String?,
            secureLinkExpression: String?,
            keyOptions: KeyLoadingOptions,
            catAudience: String?
        ) {
            self.catAudience = catAudience
            self.profile = profile
            self.key = key
            self.keyID = keyID
            self.keyOptions = keyOptions
            self.secureLinkExpression = secureLinkExpression
        }

        /// The keys for `kind`, nil when none were given; exits 2 naming a
        /// key that cannot be read as that kind needs.
        func forKind(_ kind: CDNTokenKind) throws -> CDNVerificationKeys? {
            if let profile { return profile.verificationKeys }
            guard let key else { return nil }
            if let done = loaded[kind] { return done }
            do {
                let keys = try CDNVerificationKeys(
                    kind: kind,
                    keyFile: key.bytes,
                    source: key.path,
                    keyID: keyID,
                    secureLinkExpression: secureLinkExpression,
                    keyOptions: keyOptions,
                    catAudience: catAudience
                )
                InsecureKeyWarning.write(keys.insecureKeys.map { (source: key.path, description: $0) })
                loaded[kind] = keys
                return keys
            } catch {
                OutputStream.standardError.write("tokeninspect: error: --key for a \(kind.rawValue) token: \(TerminalText(escaping: error.reason))\n")
                OutputStream.standardError.flush()
                throw ExitCode(2)
            }
        }
    }

    /// Loads `--profile` or reads `--key`; exits 2 when either cannot be used, 64 for a usage error.
    private func loadKeys() throws -> Keys {
        let errors = OutputStream.standardError
        func usage(_ message: String) throws -> Never {
            errors.write("tokeninspect: error: \(message)\n")
            errors.flush()
            throw ExitCode(64)
        }
        if options.profile != nil, !keyPaths.isEmpty { try usage("give --profile or --key for CDN tokens, not both: the profile holds its keys") }
        if keyPaths.count > 1 { try usage("a CDN token is verified with one --key (a --profile holds several, for rotation)") }
        var profile: CDNProfile? = nil
        let credentialsDirectory = getenv("CREDENTIALS_DIRECTORY").map { String(cString: $0) }
        if let path = options.profile {
            do {
                profile = try CDNProfileSet.load(
                    paths: [path],
                    defaults: CDNProfileDefaults(lifetime: 14_400, leeway: leeway),
                    credentialsDirectory: credentialsDirectory
                ).profiles[0]
            } catch {
                errors.write("tokeninspect: error: \(TerminalText(escaping: error.message))\n")
                errors.flush()
                throw ExitCode(2)
            }
            if let kind, kind != profile!.kind {
                try usage("--kind \(kind.rawValue), and the profile \(TerminalText(escaping: profile!.name)) is for \(profile!.kind.rawValue) tokens")
            }
        }
        var key: (path: String, bytes: [UInt8])? = nil
        if let path = keyPaths.first {
            do { key = (path, try KeyFiles.read(path)) } catch {
                errors.write("tokeninspect: error: \(TerminalText(escaping: error.message))\n")
                errors.flush()
                throw ExitCode(2)
            }
        }
        if key == nil, options.keyID != nil || options.secureLinkMd5 != nil || options.catAudience != nil {
            try usage("--key-id, --secure-link-md5 and --cat-audience describe a --key, and none is given")
        }
        // The profile's key files were read to load it; they are read again here only to be recognised.
        let profileKeyFiles = (profile?.settings.keys ?? []).map { SecretFileBytes.path($0.path, credentialsDirectory: credentialsDirectory) }
        SampleKeyWarning.write(
            (key.map { [$0] } ?? []).map { SampleKeyWarning.Key(name: SampleKeys.name(ofKeyFile: $0.bytes), source: $0.path) }
                + profileKeyFiles.map { SampleKeyWarning.Key(name: (try? KeyFiles.read($0)).flatMap(SampleKeys.name(ofKeyFile:)), source: $0) }
        )
        return Keys(
            profile: profile,
            key: key,
            keyID: options.keyID,
            secureLinkExpression: options.secureLinkMd5,
            keyOptions: keyOptions,
            catAudience: options.catAudience
        )
    }
}
