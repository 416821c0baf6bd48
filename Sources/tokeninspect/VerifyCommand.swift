import ArgumentParser
import EntitlementTokens

struct VerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Give every token a verdict: VALID_TOKEN or the first check it failed.",
        discussion: """
            Checks run in this order and the first failure decides: format, signature, expiry, \
            issue time, requestor, resource, MVPD, device, replay. A check whose expectation is \
            not given is skipped. CDN tokens (a URL, a Cookie or Set-Cookie line, a \
            CTA-Common-Access-Token line, a bare EdgeAuth token or CAT) are checked as their edge \
            would, with --key or --profile, against --url, --now and --client-ip. Exit status 0 \
            when every token is valid, 1 when one is not.
            """
    )

    @OptionGroup var input: InputOptions
    @OptionGroup var keys: KeyOptions

    @Option(help: ArgumentHelp("The resource the token must be for (a bare id or a Media RSS document).", valueName: "ID"))
    var resource: String?

    @Option(help: ArgumentHelp("The requestor the token must be for.", valueName: "ID"))
    var requestor: String?

    @Option(name: .customLong("mvpd"), help: ArgumentHelp("An allowed MVPD. Repeatable.", valueName: "ID"))
    var mvpds: [String] = []

    @Option(help: ArgumentHelp("The device fingerprint the token must be bound to (lowercase hex).", valueName: "FP"))
    var fingerprint: String?

    @Option(help: ArgumentHelp("The device id the token must be bound to (hashed like the token's fingerprint).", valueName: "ID"))
    var deviceId: String?

    @Flag(help: "Accept each media token once; later copies get TOKEN_REPLAYED.")
    var rejectReplays = false

    @Flag(help: "Check everything but the signature (never for deciding playback).")
    var insecureSkipSignature = false

    @OptionGroup var jobs: JobOptions
    @OptionGroup var credentials: CredentialOptions
    @OptionGroup var cdn: CDNOptions

    func validate() throws {
        if fingerprint != nil && deviceId != nil {
            throw ValidationError("give --fingerprint or --device-id, not both")
        }
        // ASCII hex only: `Character.isHexDigit` also accepts full-width digits.
        if let fingerprint, !fingerprint.utf8.allSatisfy(Self.isASCIIHexDigit) || ![32, 40, 64].contains(fingerprint.utf8.count) {
            throw ValidationError("--fingerprint must be 32, 40 or 64 hex digits (0-9, a-f)")
        }
    }

    /// Which keys to trust: checked in `run()`, not `validate()`, because
    /// ArgumentParser reports an unknown option only after `validate()`
    /// succeeds, and `verify --kye K` must hear "did you mean '--key'".
    private func checkKeyChoice() throws {
        if keys.keys.isEmpty && cdn.profile == nil && !insecureSkipSignature {
            throw ValidationError("verify needs at least one --key, or --profile for CDN tokens (or --insecure-skip-signature to check everything else)")
        }
        if (!keys.keys.isEmpty || cdn.profile != nil) && insecureSkipSignature {
            throw ValidationError("--insecure-skip-signature makes no sense with --key or --profile")
        }
    }

    static func isASCIIHexDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte | 0x20)
    }

    func run() throws {
        // A usage error with verify's own usage line (a ValidationError thrown
        // from run() would get the root command's).
        do {
            try checkKeyChoice()
        } catch {
            let errors = OutputStream.standardError
            errors.write("Error: \(String(describing: error))\n")
            errors.write("Usage: \(TokenInspect.usageString(for: VerifyCommand.self))\n")
            errors.write("  See 'tokeninspect verify --help' for more information.\n")
            errors.flush()
            throw ExitCode(64)
        }
        // Software statements, signed requestor IDs and user metadata (docs/DESIGN.md#the-sdks-other-credentials) take their own run.
        let sources: [InputSource]
        switch try CredentialDispatch.run(input: input, keys: keys, kind: credentials.kind, cdn: cdn, verifying: true,
                                          insecureSkipSignature: insecureSkipSignature, detailed: false,
                                          configuration: input.decoderConfiguration(),
                                          requestor: requestor, digest: credentials.digest.value) {
        case .finished(let status):
            if status != 0 { throw ExitCode(status) }
            return
        case .tokens(let tokenSources):
            sources = tokenSources
        }
        keys.announceNow()
        let now = keys.nowTimestamp
        let policy = VerificationPolicy(
            requestorID: requestor,
            allowedMVPDs: mvpds.isEmpty ? nil : mvpds,
            leewayMilliseconds: Int64(keys.leeway * 1000),
            replayStore: rejectReplays ? InMemoryReplayStore() : nil,
            clock: { now }
        )
        var expectations = RequestExpectations(resourceID: resource)
        if let fingerprint { expectations.device = .fingerprint(fingerprint.lowercased()) }
        if let deviceId { expectations.device = .deviceID(deviceId) }
        let signature: SignatureRequirement = try keys.keyRing().map { .trustedKeys($0) } ?? .insecureSkipped
        let configuration = input.decoderConfiguration()
        let verifier = TokenVerifier(signature: signature, policy: policy, decoderConfiguration: configuration)
        let run = TokenRun(mode: .verify(verifier, expectations), inputs: sources, format: input.format,
                           jobs: jobs.jobs, decoderConfiguration: configuration, now: now, showSignedBytes: input.showSignedBytes,
                           color: input.color)
        let status = run.run()
        if status != 0 { throw ExitCode(status) }
    }
}
