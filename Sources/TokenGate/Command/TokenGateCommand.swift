import ArgumentParser
import EntitlementTokens
import Logging

/// `tokengate`: the verification service in front of a media server.
public struct TokenGateCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "tokengate",
        abstract: "Verify TV Everywhere media tokens for nginx, Traefik, Caddy, HAProxy or Envoy before playback.",
        // Paragraphs are one source line each (`\` continues a line): the
        // help re-wraps them to the terminal, and a hard newline inside one
        // would leave a ragged stub at any other width (GateHelpTests).
        // Indented lines are kept as written; they fit 80 columns.
        discussion: """
            Put it beside your media server and let the proxy ask it about every request:

              nginx auth_request        GET /v1/auth-request (X-Original-URI)
              Traefik, Caddy, HAProxy   GET /v1/forward-auth (X-Forwarded-Uri)
              Envoy ext_authz (HTTP)    /v1/ext-authz/<original path>, any method

            Answers: 200 allow, 401 no usable token, 403 refused token, 503 replay check \
            unavailable, 500 misconfigured proxy; X-Token-Status says why. See deploy/ for \
            the proxy sites, docs/DEPLOY.md (the operator's guide) and docs/openapi.yaml \
            (every endpoint, status and header).

            Before starting the service, `tokengate check` with the same options or --config file loads the keys, the \
            session secrets, the CDN profiles and CAT keys, and asks the replay store, then names every problem (see \
            `tokengate check --help`).

            To look at a token in a browser instead: tokengate debugger --key PATH, then open \
            http://127.0.0.1:8090/debugger (see `tokengate debugger --help`).


            """ + GateExitStatus.table.helpText,
        version: ProductVersion.version,
        subcommands: [Serve.self, CheckCommand.self, Debugger.self],
        defaultSubcommand: nil
    )

    public init() {}

    /// The entry point of the executable: expands a `--config FILE` into the
    /// arguments (the command line after it), then parses and runs.
    public static func runFromCommandLine() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        let expanded: [String]
        do {
            expanded = try ConfigFile.expand(arguments)
        } catch {
            exit(withError: ValidationError("\(error)"))
        }
        await main(expanded)
    }
}

/// `tokengate serve`.
public struct Serve: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        abstract: "Serve the auth endpoints.",
        discussion: """
            The gate refuses to start without a requestor (--requestor, or --allow-any-requestor) \
            and a source for each request's expected resource (--resource for one channel, \
            --resource-header X-Token-Resource when the proxy sets it per location, or \
            --allow-any-resource). It listens on 127.0.0.1:8089 unless told otherwise.

            Example, nginx setting X-Token-Resource per location (deploy/nginx/tokengate.conf):

              tokengate serve --key /etc/tokengate/keys --requestor TNT \\
                --resource-header X-Token-Resource \\
                --session-secret /etc/tokengate/session.key

            Keys reload on SIGHUP and when their files change. On SIGTERM /readyz turns 503, \
            then in-flight requests finish. Every option can also be set in a --config file \
            (`name = value` lines; the command line wins).

            Under systemd, a relative --session-secret path is read from $CREDENTIALS_DIRECTORY \
            (where LoadCredential= puts the unit's secrets), so `session-secret = session.key` \
            in the config file names the credential.
            """,
        version: ProductVersion.version
    )

    @OptionGroup var options: ServeOptions

    public init() {}

    public func validate() throws {
        _ = try options.validatedConfiguration()
    }

    public func run() async throws {
        let configuration = try options.validatedConfiguration()
        let format = configuration.logFormat
        LoggingSystem.bootstrap { GateLogHandler(label: $0, format: format) }
        let logger = Logger(label: "tokengate")
        let runtime: GateRuntime
        do {
            runtime = try GateRuntime(configuration: configuration, logger: logger)
        } catch {
            logger.critical("cannot start", metadata: ["error": .string(error.message)])
            throw ExitCode(2)
        }
        if let warning = runtime.readiness.sampleKeyWarning { logger.warning("\(warning)") }
        if configuration.allowUnboundDevice {
            logger.warning("\(GateConfiguration.unboundDeviceWarning)")
        }
        switch await runtime.checkReplayStore() {
        case .ready:
            break
        case .unreachable(let reason):
            logger.warning(
                "replay store not answering: serving with /readyz red and 503 for media tokens until it does",
                metadata: ["reason": .string(reason)]
            )
        case .refused(let reason):
            logger.critical("cannot start: the replay store refused the gate", metadata: ["error": .string(reason)])
            throw ExitCode(2)
        }
        logger.info(
            "serving",
            metadata: [
                "version": .string(ProductVersion.version),
                "commit": .string(ProductVersion.commit),
                "listen": .string("\(configuration.host):\(configuration.port)"),
                "requestor": .string(configuration.requestorID ?? "any (insecure)"),
                "replay": .string(options.replay.hasPrefix("redis") ? "redis" : options.replay),
                "sessions": .string(configuration.sessionSecretPaths.isEmpty ? "off" : "on"),
                "verdict_cache": .stringConvertible(configuration.verdictCacheSize),
                "device_binding": .string(configuration.allowUnboundDevice ? "optional (insecure)" : "required"),
                "debugger": .string(configuration.debugger ? "http://\(configuration.host):\(configuration.port)/debugger" : "off"),
            ]
        )
        try await runtime.run()
    }
}
