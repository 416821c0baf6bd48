import EntitlementTokens

struct VerifyCommand {
    static let command = CommandSpec(
        name: "verify",
        abstract: "Give every token a verdict: VALID_TOKEN or the first check it failed.",
        discussion: """
            Checks run in this order and the first failure decides: format, signature, expiry, \
            issue time, requestor, resource, MVPD, device, replay. A check whose expectation is \
            not given is skipped. CDN tokens (a URL, a Cookie or Set-Cookie line, a \
            CTA-Common-Access-Token line, a bare EdgeAuth token or CAT) are checked as their edge \
            would, with --key or --profile, against --url, --now and --client-ip. Exit status 0 \
            when every token is valid, 1 when one is not.
            """,
        options: InputOptions.options + KeyOptions.options + [
            .option("resource", "ID", help: "The resource the token must be for (a bare id or a Media RSS document)."),
            .option("requestor", "ID", help: "The requestor the token must be for."),
            .repeating("mvpd", "ID", help: "An allowed MVPD. Repeatable."),
            .option("fingerprint", "FP", help: "The device fingerprint the token must be bound to (lowercase hex)."),
            .option("device-id", "ID", help: "The device id the token must be bound to (hashed like the token's fingerprint)."),
            .flag("reject-replays", help: "Accept each media token once; later copies get TOKEN_REPLAYED."),
            .flag("insecure-skip-signature", help: "Check everything but the signature (never for deciding playback)."),
        ] + JobOptions.options + CredentialOptions.options + CDNOptions.options,
        arguments: InputOptions.arguments,
        run: { try VerifyCommand($0).run() }
    )

    let input: InputOptions
    let keys: KeyOptions
    let resource: String?
    let requestor: String?
    let mvpds: [String]
    let fingerprint: String?
    let deviceId: String?
    let rejectReplays: Bool
    let insecureSkipSignature: Bool
    let jobs: JobOptions
    let credentials: CredentialOptions
    let cdn: CDNOptions

    init(_ parsed: ParsedArguments) throws {
        input = try InputOptions(parsed)
        keys = try KeyOptions(parsed)
        resource = parsed.string("resource")
        requestor = parsed.string("requestor")
        mvpds = parsed.strings("mvpd")
        fingerprint = parsed.string("fingerprint")
        deviceId = parsed.string("device-id")
        rejectReplays = parsed.flag("reject-replays")
        insecureSkipSignature = parsed.flag("insecure-skip-signature")
        jobs = try JobOptions(parsed)
        credentials = CredentialOptions(parsed)
        cdn = try CDNOptions(parsed)
        try validate()
    }

    /// The options that judge an entitlement token, as given: a usage error on a run of CDN tokens.
    var tokenOptionsGiven: [String] {
        [
            (resource != nil, "--resource"), (requestor != nil, "--requestor"), (!mvpds.isEmpty, "--mvpd"), (fingerprint != nil, "--fingerprint"),
            (deviceId != nil, "--device-id"), (rejectReplays, "--reject-replays"),
        ].filter(\.0).map(\.1)
    }

    func validate() throws {
        if fingerprint != nil && deviceId != nil {
            throw ValidationError("give --fingerprint or --device-id, not both")
        }
        // ASCII hex only: `Character.isHexDigit` also accepts full-width digits.
        if let fingerprint, !fingerprint.utf8.allSatisfy(Self.isASCIIHexDigit) || ![32, 40, 64].contains(fingerprint.utf8.count) {
            throw ValidationError("--fingerprint must be 32, 40 or 64 hex digits (0-9, a-f)")
        }
        // Which keys to trust.
        if keys.keys.isEmpty && cdn.profile == nil && !insecureSkipSignature {
            throw ValidationError(
                "verify needs at least one --key, or --profile for CDN tokens (or --insecure-skip-signature to check everything else)"
            )
        }
        if (!keys.keys.isEmpty || cdn.profile != nil) && insecureSkipSignature {
            throw ValidationError("--insecure-skip-signature makes no sense with --key or --profile")
        }
    }

    static func isASCIIHexDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte | 0x20)
    }

    func run() throws {
        try HARInputCheck.refuseCaptures(input.sources())
        // Software statements, signed requestor IDs and user metadata (docs/DESIGN.md#the-sdks-other-credentials) take their own run.
        let sources: [InputSource]
        switch try CredentialDispatch.run(
            input: input,
            keys: keys,
            kind: credentials.kind,
            cdn: cdn,
            verifying: true,
            insecureSkipSignature: insecureSkipSignature,
            detailed: false,
            configuration: input.decoderConfiguration(),
            requestor: requestor,
            digest: credentials.digest.value,
            tokenOptionsGiven: tokenOptionsGiven
        ) {
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
        let run = TokenRun(
            mode: .verify(verifier, expectations),
            inputs: sources,
            format: input.format,
            jobs: jobs.jobs,
            decoderConfiguration: configuration,
            now: now,
            showSignedBytes: input.showSignedBytes,
            color: input.color
        )
        let status = run.run()
        if status != 0 { throw ExitCode(status) }
    }
}
