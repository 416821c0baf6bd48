import EntitlementTokens

struct InspectCommand {
    static let command = CommandSpec(
        name: "inspect",
        abstract: "Decode and show every token, with no judgement (verifies too when --key is given).",
        discussion: """
            CDN tokens (a URL, a Cookie or Set-Cookie line, a CTA-Common-Access-Token line, a bare \
            EdgeAuth token or CAT) are detected and every field shown, a CAT also in CBOR diagnostic \
            notation; with --key or --profile they are verified too. Exit status 0 when every token \
            decoded, 1 when one did not, 2 when nothing was usable.
            """,
        options: InputOptions.options + KeyOptions.options + JobOptions.options + CredentialOptions.options + CDNOptions.options + [
            .flag(
                "repair-plus",
                help: "Read a Base64 token whose '+' arrived as a space (an unencoded query string) as if repaired, with a warning."
            ),
            .choice(
                "emit",
                "WHAT",
                Emission.self,
                help:
                    "What to write: report (the decoded fields, as --format says) or xml (each decoded token as it is, for xmllint; with --show-signed-bytes only the exact bytes the signature covers, for openssl dgst -verify).",
                default: .report
            ),
        ],
        arguments: InputOptions.arguments,
        run: { try InspectCommand($0).run() }
    )

    let input: InputOptions
    let keys: KeyOptions
    let jobs: JobOptions
    let credentials: CredentialOptions
    let cdn: CDNOptions
    let repairPlus: Bool
    let emit: Emission

    enum Emission: String, CaseIterable {
        case report, xml
    }

    init(_ parsed: ParsedArguments) throws {
        input = try InputOptions(parsed)
        keys = try KeyOptions(parsed)
        jobs = try JobOptions(parsed)
        credentials = CredentialOptions(parsed)
        cdn = try CDNOptions(parsed)
        repairPlus = parsed.flag("repair-plus")
        emit = parsed.choice("emit")
    }

    func run() throws {
        try HARInputCheck.refuseCaptures(input.sources())
        let configuration = input.decoderConfiguration(repairsSpacesAsPlus: repairPlus)
        if emit == .xml {
            let status = XMLEmission(
                inputs: try input.sources(),
                decoderConfiguration: configuration,
                signedBytesOnly: input.showSignedBytes
            ).run()
            if status != 0 { throw ExitCode(status) }
            return
        }
        // Software statements, signed requestor IDs and user metadata (docs/DESIGN.md#the-sdks-other-credentials) take their own run.
        let sources: [InputSource]
        switch try CredentialDispatch.run(
            input: input,
            keys: keys,
            kind: credentials.kind,
            cdn: cdn,
            verifying: false,
            detailed: true,
            configuration: configuration,
            tokenOptionsGiven: repairPlus ? ["--repair-plus"] : []
        ) {
        case .finished(let status):
            if status != 0 { throw ExitCode(status) }
            return
        case .tokens(let tokenSources):
            sources = tokenSources
        }
        keys.announceNow()
        let now = keys.nowTimestamp
        let verifier = try keys.keyRing().map { ring in
            TokenVerifier(
                signature: .trustedKeys(ring),
                policy: VerificationPolicy(leewayMilliseconds: Int64(keys.leeway * 1000), clock: { now }),
                decoderConfiguration: configuration
            )
        }
        let run = TokenRun(
            mode: .inspect(verifier),
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
