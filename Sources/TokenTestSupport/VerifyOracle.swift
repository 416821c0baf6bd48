import EntitlementTokens
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// FuzzVerify: any bytes through the full verifier, with the samples' trusted
/// keys and policy (Samples/README.md: `--now 2026-01-15T12:03:00Z --requestor
/// TNT --resource TNT --mvpd Comcast_SSO --device-id samples-device-1
/// --reject-replays`).
///
/// Every input gets a verdict (the API cannot do otherwise); the oracle is
/// about `VALID_TOKEN`, which must only ever come for
/// - signed bytes that a trusted key verifies, checked again here straight
///   over OpenSSL with keys loaded by the harness (``IndependentVerifier``);
/// - signed bytes that stand verbatim in the input once transport-decoded by
///   the harness's own decoding, and that run from `<` to `>`;
/// - a token that meets the policy, re-checked field by field here;
/// - a token not already accepted earlier in the same input (one-time use).
///
/// The input is verified whole (`verify(_:)`) and, record by record, as a
/// stream (`RecordSplitter` + `verify(_: TokenRecord)`), which also reaches
/// REST JSON documents and multi-token files.
///
/// The fuzzer cannot forge signatures, so behind the trusted-key verifier the
/// policies would only ever see the seeds' tokens. Each record therefore also
/// goes through a second verifier with the same policy and the signature check
/// switched off (`.insecureSkipped`): its verdict must agree with the first
/// one's wherever the signature is not what decides, and a `VALID_TOKEN` from
/// it must pass the same policy re-check.
public final class VerifyOracle {
    public static let target = "FuzzVerify"
    public static let keysEnvironment = "TOKENINSPECT_FUZZ_KEYS"

    /// 2026-01-15T12:03:00Z, the samples' `--now`.
    public static let now = TokenTimestamp(millisecondsSince1970: 1_768_478_580_000)!
    public static let leewayMilliseconds: Int64 = 30_000
    public static let requestor = "TNT"
    public static let resource = "TNT"
    public static let mvpds: [String] = ["Comcast_SSO"]
    public static let deviceID = "samples-device-1"
    /// The fingerprints a token bound to `deviceID` may carry (docs/DESIGN.md#statuses: SHA-256,
    /// SHA-1 or MD5 in lowercase hex), as known answers from coreutils —
    /// `printf samples-device-1 | sha256sum` (and `sha1sum`, `md5sum`) — not
    /// computed by code that could share a bug with the library's
    /// `DeviceFingerprint` (`IndependentOracleTests` re-runs the commands).
    public static let deviceFingerprints: Set<String> = [
        "a7d62e7b0f68120f14607c5a03e94ce3942639165425089c576dafbc734c111b",
        "fc0d1f749b3a3e1da564eba29f0ff2d69e5baaf9",
        "f25f7225777bd40241f173d683112988",
    ]

    /// What every fuzzed request expects (docs/DESIGN.md#the-library-api-for-servers: per request, not at start-up).
    static let expectations = RequestExpectations(resourceID: resource, device: .deviceID(deviceID))
    let verifier: TokenVerifier
    /// Same policy, signatures not checked: reaches the policies with any token.
    let unsigned: TokenVerifier
    let independent: IndependentVerifier
    let replays = ReplayStorePerInput()
    let unsignedReplays = ReplayStorePerInput()
    /// Records verified per input, at most (a stream of thousands of one-byte
    /// lines would otherwise make one input take seconds).
    let maxRecords = 24

    public init(keyDirectory: String) {
        let ring: KeyRing
        do {
            ring = try KeyRing.load(paths: [keyDirectory])
        } catch {
            setupFailure("the library cannot load the trusted keys in \(keyDirectory): \(error)")
        }
        independent = IndependentVerifier(directory: keyDirectory)
        guard ring.keys.count == independent.count, independent.count > 0 else {
            setupFailure("\(keyDirectory): the library loaded \(ring.keys.count) keys, the harness \(independent.count)")
        }
        func policy(_ store: ReplayStorePerInput) -> VerificationPolicy {
            VerificationPolicy(
                requestorID: Self.requestor,
                allowedMVPDs: Self.mvpds,
                leewayMilliseconds: Self.leewayMilliseconds,
                replayStore: store,
                clock: { VerifyOracle.now }
            )
        }
        verifier = TokenVerifier(signature: .trustedKeys(ring), policy: policy(replays))
        unsigned = TokenVerifier(signature: .insecureSkipped, policy: policy(unsignedReplays))
    }

    /// The trusted key directory: `$TOKENINSPECT_FUZZ_KEYS` (Fuzz/run sets it),
    /// else `Samples/keys/trusted` found by walking up from the executable.
    /// Never the current directory, and never silently nothing.
    public static func locateKeys() -> String {
        if let value = getenv(keysEnvironment) {
            let path = String(cString: value)
            guard isDirectory(path) else { setupFailure("\(keysEnvironment)=\(path) is not a directory") }
            return path
        }
        guard var directory = executableDirectory() else { setupFailure("cannot read /proc/self/exe to find Samples/keys/trusted") }
        let start = directory
        while !directory.isEmpty {
            let candidate = directory + "/Samples/keys/trusted"
            if isDirectory(candidate) { return candidate }
            guard let slash = directory.lastIndex(of: "/") else { break }
            directory = String(directory[..<slash])
        }
        setupFailure("no Samples/keys/trusted above \(start); set \(keysEnvironment) to the trusted key directory")
    }

    public func check(_ input: [UInt8]) {
        replays.reset()
        var accepted: [[UInt8]] = []
        var splitter = RecordSplitter()
        var records = splitter.feed(input)
        records += splitter.finish()
        let whole = verifier.verify(input, expecting: Self.expectations)
        // A REST document holding one token verifies as that token: its signed
        // bytes stand in the record the splitter cuts (the serializedToken).
        let wholeRecord = whole.token?.envelope != nil && records.count == 1 ? records[0].bytes : input
        checkVerdict(whole, record: wholeRecord, input: input, accepted: &accepted, how: "whole input")

        replays.reset()
        unsignedReplays.reset()
        accepted = []
        var acceptedUnsigned: [[UInt8]] = []
        for record in records.prefix(maxRecords) {
            let how = "record \(record.index) (line \(record.line))"
            let verdict = verifier.verify(record, expecting: Self.expectations)
            checkVerdict(verdict, record: record.bytes, input: input, accepted: &accepted, how: how)
            checkText(TokenReport(input: record.index, source: "fuzz", line: record.line, verdict: verdict), how: how)
            let unchecked = unsigned.verify(record, expecting: Self.expectations)
            checkUnsigned(unchecked, against: verdict, accepted: &acceptedUnsigned, how: how)
        }
    }

    /// The text a person sees can never be driven by the input (docs/DESIGN.md#text-for-people): no
    /// control, bidi or separator character but the line breaks the renderer
    /// makes, and exactly one status line (a line starting with `#`).
    func checkText(_ report: TokenReport, how: String) {
        for detailed in [false, true] {
            let text = report.text(TextReportOptions(now: Self.now, detailed: detailed, showSignedBytes: true)).rendered
            if let bad = text.unicodeScalars.first(where: { $0 != "\n" && TerminalText.isUnsafe($0) }) {
                oracleFailure(Self.target, "\(how): the text report holds U+\(String(bad.value, radix: 16, uppercase: true)) raw:\n\(text)")
            }
            let statusLines = text.split(separator: "\n").filter { $0.hasPrefix("#") }.count
            if statusLines != 1 { oracleFailure(Self.target, "\(how): \(statusLines) status lines in the text report:\n\(text)") }
        }
    }

    /// The verifier without signature checks agrees with the one with them
    /// wherever the signature does not decide, and never says INVALID_SIGNATURE.
    func checkUnsigned(_ verdict: Verdict, against signed: Verdict, accepted: inout [[UInt8]], how: String) {
        func fail(_ message: String) -> Never {
            oracleFailure(
                Self.target,
                "\(how), signatures not checked: \(message)\nverdict: \(verdict.status.rawValue) \(verdict.reason)\n"
                    + "with signatures: \(signed.status.rawValue) \(signed.reason)\n" + (verdict.token.map(Summary.of) ?? "(no token)")
            )
        }
        if verdict.status == .invalidSignature { fail("INVALID_SIGNATURE without checking signatures") }
        if (verdict.status == .validToken) != (verdict.verified != nil) { fail("VALID_TOKEN and `verified` disagree") }
        if (verdict.status == .invalidTokenFormat) != (signed.status == .invalidTokenFormat) {
            fail("one verifier says INVALID_TOKEN_FORMAT and the other does not")
        }
        // Replay history differs between the two (a forged copy is accepted only here).
        if ![.invalidSignature, .tokenReplayed].contains(signed.status), verdict.status != .tokenReplayed,
            verdict.status != signed.status
        {
            fail("the verdicts differ although the signature verified")
        }
        guard verdict.status == .validToken else { return }
        guard let token = verdict.token else { fail("VALID_TOKEN without a token") }
        checkPolicy(token, accepted: &accepted, fail: fail)
    }

    func checkVerdict(_ verdict: Verdict, record: [UInt8], input: [UInt8], accepted: inout [[UInt8]], how: String) {
        func fail(_ message: String) -> Never {
            oracleFailure(
                Self.target,
                "\(how): \(message)\nverdict: \(verdict.status.rawValue) \(escaped(verdict.reason))\n"
                    + (verdict.token.map(Summary.of) ?? "(no token)")
            )
        }
        _ = verdict.reason
        if (verdict.status == .validToken) != (verdict.verified != nil) { fail("VALID_TOKEN and `verified` disagree") }
        if verdict.status == .invalidTokenFormat {
            if verdict.token == nil, verdict.formatError == nil { fail("INVALID_TOKEN_FORMAT without a token or an error") }
            if let error = verdict.formatError { DecodeOracle.checkError(error, inputCount: max(record.count, input.count), target: Self.target) }
        } else if verdict.token == nil {
            fail("a \(verdict.status.rawValue) verdict without the decoded token")
        }
        guard verdict.status == .validToken else { return }
        guard let token = verdict.token, verdict.key != nil else { fail("VALID_TOKEN without a token or a verifying key") }

        // 1. The signed bytes: '<' … '>', verbatim in the transport-decoded record.
        let signed = Array(token.signedBytes)
        guard signed.first == UInt8(ascii: "<"), signed.last == UInt8(ascii: ">") else { fail("signed bytes do not run from '<' to '>'") }
        let candidates = Self.transportCandidates(record)
        guard candidates.contains(where: { contains($0, signed) }) else {
            fail("the signed bytes do not occur in the record under any transport decoding the harness knows")
        }
        let signatureText = Array(token.signatureText.utf8)
        guard candidates.contains(where: { contains($0, signatureText) }) else {
            fail("the signature text does not occur in the transport-decoded record")
        }

        // 2. A trusted key verifies them, checked straight over OpenSSL.
        guard let signature = independentBase64(signatureText) else {
            fail("the signature text is not Base64 to the harness, yet the token was accepted")
        }
        guard independent.verifyingKey(signature: signature, message: signed) != nil else {
            fail("no trusted key verifies the signed bytes (checked with OpenSSL directly), yet the token was accepted")
        }

        // 3. The policy, field by field; 4. one-time use.
        checkPolicy(token, accepted: &accepted, fail: fail)
    }

    /// The samples' policy re-checked on an accepted token, and one-time use:
    /// the same media token is not accepted twice within one input.
    func checkPolicy(_ token: DecodedToken, accepted: inout [[UInt8]], fail: (String) -> Never) {
        let signed = Array(token.signedBytes)
        let typed = token.token
        if typed.requestorID != Self.requestor { fail("accepted with requestor '\(escaped(typed.requestorID))'") }
        if typed.expiresAt.millisecondsSince1970 + Self.leewayMilliseconds < Self.now.millisecondsSince1970 { fail("accepted after expiry") }
        if let issued = typed.issuedAt, issued.millisecondsSince1970 > Self.now.millisecondsSince1970 + Self.leewayMilliseconds {
            fail("accepted before its issue time")
        }
        guard let mvpd = typed.mvpdID, Self.mvpds.contains(where: { $0.utf8.elementsEqual(mvpd.utf8) }) else {
            fail("accepted with MVPD \(typed.mvpdID.map(escaped) ?? "none")")
        }
        switch typed {
        case .media(let media):
            if media.resourceID != Self.resource && token.mediaRSS?.channelTitle != Self.resource {
                fail("accepted for resource '\(escaped(media.resourceID))'")
            }
        case .authorization(let authZ):
            if authZ.resourceID != Self.resource && token.mediaRSS?.channelTitle != Self.resource {
                fail("accepted for resource '\(escaped(authZ.resourceID))'")
            }
        case .authentication(let authN):
            if !authN.authorizedResources.isEmpty, !authN.authorizedResources.contains(Self.resource) {
                // Media RSS ids among them could match by channel; the library's reason says which.
                if !authN.authorizedResources.contains(where: { $0.contains("<") }) {
                    fail("accepted for resources \(authN.authorizedResources.map(escaped))")
                }
            }
        }
        if typed.kind != .media {
            guard let fingerprint = typed.fingerprint, Self.deviceFingerprints.contains(fingerprint)
            else { fail("accepted for another device (\(typed.fingerprint ?? "none"))") }
        }

        if typed.kind == .media {
            if accepted.contains(signed) { fail("the same media token was accepted twice (replay)") }
            accepted.append(signed)
        }
    }

    /// What the record may hold once its transport is undone: itself (raw
    /// XML), its `name=` value, that percent-decoded, and either one Base64-decoded.
    static func transportCandidates(_ record: [UInt8]) -> [[UInt8]] {
        var candidates: [[UInt8]] = [record]
        var body = record[...]
        // Leading white space and UTF-8 BOMs, in any order (a pasted record
        // may carry an editor's BOM before or after its indentation).
        while true {
            if let first = body.first, [0x20, 0x09, 0x0A, 0x0D].contains(first) {
                body = body.dropFirst()
            } else if body.starts(with: [0xEF, 0xBB, 0xBF]) {
                body = body.dropFirst(3)
            } else {
                break
            }
        }
        while let last = body.last, [0x20, 0x09, 0x0A, 0x0D].contains(last) { body = body.dropLast() }
        if let equals = body.firstIndex(of: UInt8(ascii: "=")), equals > body.startIndex,
            body[body.startIndex..<equals].allSatisfy({
                ($0 | 0x20) >= 0x61 && ($0 | 0x20) <= 0x7A || (0x30...0x39).contains($0) || $0 == 0x5F || $0 == 0x2E
            })
        {
            body = body[(equals + 1)...]
        }
        let plain = Array(body)
        candidates.append(plain)
        var percent: [UInt8] = []
        var index = 0
        while index < plain.count {
            if plain[index] == UInt8(ascii: "%"), index + 2 < plain.count,
                let high = hexValue(plain[index + 1]), let low = hexValue(plain[index + 2])
            {
                percent.append(high << 4 | low)
                index += 3
            } else {
                percent.append(plain[index])
                index += 1
            }
        }
        candidates.append(percent)
        for encoded in [plain, percent] {
            if let decoded = independentBase64(encoded) { candidates.append(decoded) }
        }
        return candidates
    }

    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: byte - 0x30
        case 0x41...0x46: byte - 0x41 + 10
        case 0x61...0x66: byte - 0x61 + 10
        default: nil
        }
    }
}

/// The library's `InMemoryReplayStore`, started afresh for each fuzz input so
/// that a verdict depends on that input alone (libFuzzer needs that), while
/// repeats inside one input still exercise the replay check.
final class ReplayStorePerInput: ReplayStore {
    private let current = Mutex(InMemoryReplayStore())

    func reset() {
        current.withLock { $0 = InMemoryReplayStore() }
    }

    func accept(_ identity: ReplayIdentity, until: TokenTimestamp, now: TokenTimestamp) async -> ReplayDecision {
        await current.withLock { $0 }.accept(identity, until: until, now: now)
    }

    func acceptWithoutWaiting(_ identity: ReplayIdentity, until: TokenTimestamp, now: TokenTimestamp) -> ReplayDecision? {
        current.withLock { $0 }.acceptWithoutWaiting(identity, until: until, now: now)
    }
}
