import CDNTokens
import EntitlementTokens

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A run of `inspect` or `verify` over credentials (docs/DESIGN.md#the-sdks-other-credentials) instead of tokens.
///
/// A run is one or the other, decided before any output: under `--kind`, or
/// when every INPUT is detected as a credential. Credentials are small
/// documents, so an INPUT is read whole (up to ``maximumBytes``); a file of
/// software statements, one per line, gives one record per line. INPUTs of
/// both sorts in one run are a usage error: one JSON array, one summary, one
/// exit status must mean one thing.
struct CredentialRun {
    /// Larger inputs are never credentials: they are streamed as tokens.
    static let maximumBytes = 1 << 20

    /// One INPUT, read far enough to decide.
    enum Peeked {
        /// Records of a credential input: (line, bytes).
        case credentials([(line: Int, bytes: [UInt8])])
        /// A CDN token input (docs/DESIGN.md#reading-cdn-tokens-back), read whole.
        case cdn([UInt8])
        /// A token input, to be streamed as before (stdin with what was read of it already).
        case tokens(InputSource)
    }

    struct Records {
        var source: InputSource
        var records: [(line: Int, bytes: [UInt8])]
    }

    /// The INPUTs sorted by what they hold.
    struct Sorted {
        var credentials: [Records] = []
        var cdn: [(source: InputSource, bytes: [UInt8])] = []
        var tokens: [InputSource] = []

        /// How many of the three sorts the INPUTs hold.
        var sorts: Int { [!credentials.isEmpty, !cdn.isEmpty, !tokens.isEmpty].filter { $0 }.count }
    }

    /// Every INPUT sorted: credentials (under `kind`, or detected), CDN tokens
    /// (under `cdnKind`, or detected by their form), or tokens. Throws when an
    /// INPUT cannot be read (exit 2).
    static func peek(
        _ sources: [InputSource],
        kind: CredentialKind?,
        cdnKind: CDNTokenKind? = nil,
        configuration: DecoderConfiguration
    ) throws(InputSource.Unreadable) -> Sorted {
        var sorted = Sorted()
        for source in sources {
            switch try peek(source, kind: kind, cdnKind: cdnKind, configuration: configuration) {
            case .credentials(let records): sorted.credentials.append(Records(source: source, records: records))
            case .cdn(let bytes): sorted.cdn.append((source, bytes))
            case .tokens(let replay): sorted.tokens.append(replay)
            }
        }
        return sorted
    }

    private static func peek(
        _ source: InputSource,
        kind: CredentialKind?,
        cdnKind: CDNTokenKind?,
        configuration: DecoderConfiguration
    )
        throws(InputSource.Unreadable) -> Peeked
    {
        var bytes: [UInt8]
        var complete = true
        var fromStandardInput = false
        switch source {
        case .literal(let text, _):
            bytes = Array(text.utf8)
        case .file(let path):
            (bytes, complete) = try read(path: path)
        case .standardInput:
            (bytes, complete) = try readStandardInput()
            fromStandardInput = true
        case .replayedStandardInput(let first):
            (bytes, complete) = try readStandardInput()
            bytes = first + bytes
            fromStandardInput = true
        }
        // Stdin cannot be read twice: what was read of it comes first when it is streamed as tokens.
        let asTokens: InputSource = fromStandardInput ? .replayedStandardInput(bytes) : source
        guard complete else { return .tokens(asTokens) }
        if cdnKind != nil || kind == nil && CDNPaste.hasCDNForm(String(decoding: bytes, as: UTF8.self)) {
            return .cdn(bytes)
        }
        if isCredential(bytes, kind: kind, configuration: configuration) || kind != nil {
            return .credentials(records(of: bytes, kind: kind, configuration: configuration))
        }
        return .tokens(asTokens)
    }

    /// True when the whole input, or its first non-blank line, is a credential.
    private static func isCredential(_ bytes: [UInt8], kind: CredentialKind?, configuration: DecoderConfiguration) -> Bool {
        switch CredentialDetection.detect(bytes, asking: kind, configuration: configuration) {
        case .softwareStatement, .signedRequestorID, .userMetadata: return true
        // A document of two kinds is refused as a credential, never read as a token.
        case .refused: return true
        case .token, .keySet: break
        }
        guard let first = firstLine(of: bytes) else { return false }
        return CredentialDetection.detect(Array(first), asking: kind, configuration: configuration).kind == .softwareStatement
    }

    /// The whole input as one record, or — when it is not one credential but its
    /// first line is a software statement — one record per non-blank line.
    private static func records(of bytes: [UInt8], kind: CredentialKind?, configuration: DecoderConfiguration) -> [(line: Int, bytes: [UInt8])] {
        switch CredentialDetection.detect(bytes, asking: kind, configuration: configuration) {
        case .softwareStatement, .signedRequestorID, .userMetadata: return [(1, bytes)]
        case .refused(let error) where error.code == .ambiguousCredential: return [(1, bytes)]
        case .token, .keySet, .refused: break
        }
        // The first line decides; only then is the input cut into lines.
        if let first = firstLine(of: bytes),
            CredentialDetection.detect(Array(first), asking: kind, configuration: configuration).kind == .softwareStatement
        {
            let split = lines(of: bytes)
            if split.count > 1 { return split }
        }
        return [(1, bytes)]
    }

    /// The first line of `bytes` that is not blank, as ``lines(of:)`` would list it first.
    private static func firstLine(of bytes: [UInt8]) -> ArraySlice<UInt8>? {
        var start = 0
        while start < bytes.count {
            let end = bytes[start...].firstIndex(of: 0x0A) ?? bytes.count
            let line = bytes[start..<end]
            if line.contains(where: { !$0.isWhitespaceByte }) { return line }
            start = end + 1
        }
        return nil
    }

    private static func lines(of bytes: [UInt8]) -> [(line: Int, bytes: [UInt8])] {
        var result: [(line: Int, bytes: [UInt8])] = []
        for (index, line) in bytes.split(separator: 0x0A, omittingEmptySubsequences: false).enumerated() {
            if line.contains(where: { !$0.isWhitespaceByte }) { result.append((index + 1, Array(line))) }
        }
        return result
    }

    private static func read(path: String) throws(InputSource.Unreadable) -> ([UInt8], Bool) {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else {
            throw InputSource.Unreadable(description: "cannot read \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        var info = stat()
        if fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) != S_IFREG {
            // A directory fails in the token reader with its own words; a FIFO is read as a stream there.
            return ([], false)
        }
        return try readUpToLimit(descriptor, name: path)
    }

    private static func readStandardInput() throws(InputSource.Unreadable) -> ([UInt8], Bool) {
        try readUpToLimit(STDIN_FILENO, name: "stdin")
    }

    /// Up to ``maximumBytes`` + 1 bytes; complete when the input ended within the limit.
    private static func readUpToLimit(_ descriptor: Int32, name: String) throws(InputSource.Unreadable) -> ([UInt8], Bool) {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while bytes.count <= maximumBytes {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw InputSource.Unreadable(description: "cannot read \(name): \(String(cString: strerror(errno)))")
            }
            if count == 0 { return (bytes, true) }
            bytes += chunk[0..<count]
        }
        return (bytes, false)
    }

    // MARK: Running

    var records: [Records]
    var kind: CredentialKind?
    var verifier: SoftwareStatementVerifier?
    var requestorIDVerifier: SignedRequestorIDVerifier? = nil
    var requestor: String? = nil
    var format: OutputFormat
    var decoderConfiguration: DecoderConfiguration
    var now: TokenTimestamp
    var detailed: Bool
    var color: ColorChoice
    var terminal = Terminal.current

    /// Writes every report; returns the exit status of docs/DESIGN.md#exit-codes.
    func run() -> Int32 {
        let output = OutputStream.standardOutput
        let style = TextStyle(colored: terminal.usesColor(color))
        var reports: [CredentialReport] = []
        var index = 0
        for input in records {
            for record in input.records {
                index += 1
                let detected = CredentialDetection.detect(record.bytes, asking: kind, configuration: decoderConfiguration)
                let report = CredentialReport.make(
                    detected,
                    input: index,
                    source: input.source.name,
                    line: record.line,
                    verifier: verifier,
                    configuration: decoderConfiguration,
                    requestorIDVerifier: requestorIDVerifier,
                    requestor: requestor
                )
                reports.append(report)
                switch format {
                case .text: output.write(report.text(TextReportOptions(style: style, now: now, detailed: detailed)))
                case .jsonl: output.write((report.json() + [0x0A]).span)
                case .json: break
                }
            }
        }
        if format == .json { output.write(CredentialReport.jsonArray(reports).span) }
        let failures = reports.filter { $0.status != nil && $0.status != .validToken }.count
        let summary = "\(reports.count) credential\(reports.count == 1 ? "" : "s"): \(reports.count - failures) ok, \(failures) failed"
        let stream = format == .text ? output : OutputStream.standardError
        stream.write("\(summary)\n")
        output.flush()
        stream.flush()
        if reports.isEmpty { return 2 }
        return failures > 0 ? 1 : 0
    }
}

extension UInt8 {
    fileprivate var isWhitespaceByte: Bool { self == 0x20 || self == 0x09 || self == 0x0D || self == 0x0A }
}

/// How `inspect` and `verify` hand their INPUTs to a credential run, or back to the token run.
enum CredentialDispatch {
    enum Outcome {
        /// A credential run ended with this exit status.
        case finished(Int32)
        /// A token run: read these sources (stdin replayed with what was peeked).
        case tokens([InputSource])
    }

    /// `verifying`: `verify` (keys required unless `insecureSkipSignature`); else
    /// `inspect` (verifies only when keys are given).
    static func run(
        input: InputOptions,
        keys: KeyOptions,
        kind: InputKindArgument?,
        cdn: CDNOptions,
        verifying: Bool,
        insecureSkipSignature: Bool = false,
        detailed: Bool,
        configuration: DecoderConfiguration,
        requestor: String? = nil,
        digest: RequestorIDDigest = .sha256,
        tokenOptionsGiven: [String] = []
    ) throws -> Outcome {
        let errors = OutputStream.standardError
        func usage(_ message: TerminalText) -> Outcome {
            errors.write("tokeninspect: error: \(message)\n")
            errors.flush()
            return .finished(64)
        }
        let sources = try input.sources()
        let sorted: CredentialRun.Sorted
        do {
            sorted = try CredentialRun.peek(sources, kind: kind?.credentialKind, cdnKind: kind?.cdnKind, configuration: configuration)
        } catch {
            errors.write("tokeninspect: error: \(error.description)\n")
            errors.flush()
            return .finished(2)
        }
        if sorted.sorts > 1 {
            if sorted.cdn.isEmpty {
                return usage(
                    "the INPUTs mix tokens and credentials (software statements, signed requestor IDs, user metadata); give them in separate runs"
                )
            }
            return usage("the INPUTs mix CDN tokens with entitlement tokens or credentials; give them in separate runs")
        }
        if !sorted.cdn.isEmpty {
            // CDN tokens (docs/DESIGN.md#reading-cdn-tokens-back): keys are read as each kind needs them.
            if insecureSkipSignature {
                return usage("--insecure-skip-signature is not for CDN tokens: give --key or --profile, or use inspect")
            }
            // An option the run would ignore is worse than none: a CAT of another iss would come back valid under --requestor.
            if let first = tokenOptionsGiven.first {
                return usage(
                    "\(first) is for entitlement tokens, and the INPUT is CDN tokens (akamai, cloudfront, cat, nginx-secure-link); "
                        + "their checks are --url, --client-ip, --now and the key's or profile's"
                )
            }
            keys.announceNow()
            let run = CDNRun(
                inputs: sorted.cdn,
                kind: kind?.cdnKind,
                options: cdn,
                keyPaths: keys.keys,
                verifying: verifying,
                format: input.format,
                now: keys.nowTimestamp,
                leeway: Int64(keys.leeway),
                keyOptions: KeyLoadingOptions(allowsInsecureKeySizes: keys.allowInsecureKeys),
                color: input.color
            )
            return .finished(try run.run())
        }
        if let first = cdn.given.first {
            return usage("\(first) is for CDN tokens (akamai, cloudfront, cat, nginx-secure-link), and the INPUT is not one")
        }
        guard !sorted.credentials.isEmpty else { return .tokens(sorted.tokens) }
        let credentials = sorted.credentials
        let kind = kind?.credentialKind
        keys.announceNow()
        let now = keys.nowTimestamp
        let password = keys.pkcs12Password(promptAllowed: !input.inputs.isEmpty && !input.inputs.contains("-"))
        let leeway = Int64(keys.leeway * 1000)
        var verifier: SoftwareStatementVerifier?
        if insecureSkipSignature {
            verifier = .insecureSkippingSignature(leewayMilliseconds: leeway, clock: { now })
        } else if !keys.keys.isEmpty {
            verifier = try keys.statementVerifier(
                now: now,
                leewayMilliseconds: leeway,
                configuration: configuration,
                password: password
            )
        }
        _ = verifying
        var requestorIDVerifier: SignedRequestorIDVerifier?
        var ringKeys: [PublicKey] = []
        if requestor != nil, !keys.keys.isEmpty {
            // The same --key files through the token ring, PKCS#12 read for its public half (JWKS
            // files hold no RSA key for this); its notices were already written for the statement verifier.
            let ringPaths = keys.keys.filter { !KeyOptions.holdsJSON($0) }
            let options = KeyLoadingOptions(allowsInsecureKeySizes: keys.allowInsecureKeys)
            do {
                if !ringPaths.isEmpty {
                    let ring = try KeyRing.load(paths: ringPaths, options: options, now: now, pkcs12Password: password.get)
                    requestorIDVerifier = SignedRequestorIDVerifier(ring: ring, digest: digest)
                    ringKeys = ring.keys
                }
            } catch {
                errors.write("tokeninspect: error: \(error.message)\n")
                errors.flush()
                return .finished(2)
            }
        }
        // The statements' keys and the requestor IDs' ring come from the same files: one warning each.
        SampleKeyWarning.write(
            (verifier?.keys ?? []).map { SampleKeyWarning.Key(name: SampleKeys.name(ofFingerprint: $0.sha256Fingerprint), source: $0.source) }
                + ringKeys.map { SampleKeyWarning.Key(name: SampleKeys.name(of: $0), source: $0.source) }
        )
        var run = CredentialRun(
            records: credentials,
            kind: kind,
            verifier: verifier,
            format: input.format,
            decoderConfiguration: configuration,
            now: now,
            detailed: detailed,
            color: input.color
        )
        run.requestorIDVerifier = requestorIDVerifier
        run.requestor = requestor
        return .finished(run.run())
    }
}

extension KeyOptions {
    /// The keys for software statements: every `--key` file that holds a JWKS
    /// (a JSON object) as one, and the rest through the key ring as for tokens.
    /// Exits 2 naming the key that could not be used.
    func statementVerifier(
        now: TokenTimestamp,
        leewayMilliseconds: Int64,
        configuration: DecoderConfiguration,
        password: PKCS12Password
    ) throws -> SoftwareStatementVerifier {
        let errors = OutputStream.standardError
        let options = KeyLoadingOptions(allowsInsecureKeySizes: allowInsecureKeys, treatsRSAKeysAsPSS: rsaPss)
        var ringPaths: [String] = []
        var sets: [JSONWebKeySet] = []
        do {
            for path in keys {
                if Self.holdsJSON(path) {
                    sets.append(try JSONWebKeySet(path: path, options: options))
                } else {
                    ringPaths.append(path)
                }
            }
            // The ring's rules plus P-384 (ES384) and a named PKCS#12's public half (docs/DESIGN.md#key-passwords).
            var fileKeys: [JWSVerificationKey] = []
            if !ringPaths.isEmpty {
                let loaded = try JWSVerificationKey.load(paths: ringPaths, options: options, now: now, pkcs12Password: password.get)
                for notice in loaded.notices {
                    errors.write("tokeninspect: \(notice.severity.rawValue): \(notice.message)\n")
                }
                fileKeys = loaded.keys
            }
            let verifier = SoftwareStatementVerifier(
                keys: fileKeys + sets.flatMap(\.keys),
                leewayMilliseconds: leewayMilliseconds,
                clock: { now },
                decoderConfiguration: configuration
            )
            if listKeys {
                for (index, key) in (verifier.keys ?? []).enumerated() {
                    errors.write("tokeninspect: key \(index + 1) of \(verifier.keys?.count ?? 0): \(key.description)\n")
                }
            }
            errors.flush()
            return verifier
        } catch {
            errors.write("tokeninspect: error: \(error.message)\n")
            errors.flush()
            throw ExitCode(2)
        }
    }

    /// The password of a PKCS#12 `--key`, by the rule of docs/DESIGN.md#key-passwords, asked for only
    /// when such a file is named, and once.
    func pkcs12Password(promptAllowed: Bool) -> PKCS12Password {
        PKCS12Password(file: keyPasswordFile, prompt: promptAllowed && isatty(STDIN_FILENO) == 1)
    }

    /// A regular file whose first non-blank byte (after a BOM) is `{`: a JWKS.
    static func holdsJSON(_ path: String) -> Bool {
        guard let file = fopen(path, "rb") else { return false }
        defer { fclose(file) }
        var info = stat()
        guard fstat(fileno(file), &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return false }
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = fread(&buffer, 1, buffer.count, file)
        var bytes = buffer[0..<count]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        return bytes.first { !$0.isWhitespaceByte } == UInt8(ascii: "{")
    }
}

/// The password of a PKCS#12 `--key` (docs/DESIGN.md#key-passwords): `--key-password-file`, else
/// `TOKENINSPECT_KEY_PASSWORD`, else a no-echo prompt on a terminal, else empty.
/// Read once, when the first PKCS#12 file is met (the statement's keys and the
/// requestor ID's ring are loaded from the same files).
final class PKCS12Password {
    private let file: String?
    private let prompt: Bool
    private var resolved: KeyPassword?

    init(file: String?, prompt: Bool) {
        self.file = file
        self.prompt = prompt
    }

    func get() throws(KeyError) -> KeyPassword {
        if let resolved { return resolved }
        let ask: (() -> String?)? = prompt ? { MetadataCommand.promptWithoutEcho(for: "the PKCS#12 --key") } : nil
        let password = try KeyPassword.resolve(file: file, environment: MetadataCommand.environment(), prompt: ask)
        resolved = password
        return password
    }
}
