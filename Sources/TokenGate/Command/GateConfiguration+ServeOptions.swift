import ArgumentParser
import CDNTokens
import EntitlementTokens
import FoundationEssentials

extension GateConfiguration {
    /// Applies the safe defaults of docs/DESIGN.md#the-gate: no requestor and no source for
    /// the expected resource is a refusal to start, unless the labelled
    /// insecure door was opened.
    package init(
        _ options: ServeOptions,
        credentialsDirectory: String? = ProcessInfo.processInfo.environment["CREDENTIALS_DIRECTORY"],
        executor: String? = ProcessInfo.processInfo.environment["TOKENGATE_EXECUTOR"]
    ) throws(GateConfigurationError) {
        guard !options.keys.isEmpty else {
            throw GateConfigurationError("no --key given: the gate needs the issuer's public key(s) to verify signatures")
        }
        keyPaths = options.keys
        keyLoading = KeyLoadingOptions(allowsInsecureKeySizes: options.allowInsecureKeys)

        switch (options.requestor, options.allowAnyRequestor) {
        case (let requestor?, false):
            guard !requestor.isEmpty else { throw GateConfigurationError("--requestor is empty") }
            requestorID = requestor
        case (nil, true): requestorID = nil
        case (_?, true): throw GateConfigurationError("--requestor and --allow-any-requestor contradict each other")
        case (nil, false):
            throw GateConfigurationError("no --requestor given: say which requestor id tokens must carry (or --allow-any-requestor, insecure)")
        }
        allowedMVPDs = options.mvpds.isEmpty ? nil : options.mvpds

        let sources = [options.resource != nil, options.resourceHeader != nil, options.allowAnyResource].filter { $0 }.count
        guard sources == 1 else {
            throw GateConfigurationError(
                sources == 0
                    ? "no source for the expected resource: give --resource ID, or --resource-header NAME (usually X-Token-Resource, set by the proxy), or --allow-any-resource (insecure)"
                    : "give only one of --resource, --resource-header and --allow-any-resource"
            )
        }
        if let resource = options.resource {
            guard !resource.isEmpty else { throw GateConfigurationError("--resource is empty") }
            self.resource = .fixed(resource)
        } else if let header = options.resourceHeader {
            self.resource = .header(try Self.headerName(header, option: "--resource-header"))
        } else {
            self.resource = .any
        }

        (host, port) = try Self.listenAddress(options.listen)
        tokenParams = options.tokenParams.isEmpty ? Self.defaultTokenParams : options.tokenParams
        for name in tokenParams + [options.sessionParam] where !Self.isParameterName(name) {
            throw GateConfigurationError("'\(name)' is not a usable query parameter name")
        }
        tokenHeader = nil
        tokenCookie = nil
        if let name = options.tokenHeader { tokenHeader = try Self.headerName(name, option: "--token-header") }
        if let name = options.tokenCookie { tokenCookie = try Self.cookieName(name, option: "--token-cookie") }
        deviceHeader = try Self.headerName(options.deviceHeader, option: "--device-header")
        allowUnboundDevice = options.allowUnboundDevice

        guard options.leeway.isFinite, options.leeway >= 0, options.leeway <= 86_400 else {
            throw GateConfigurationError("--leeway must be between 0 and 86400 seconds")
        }
        leewayMilliseconds = Int64((options.leeway * 1000).rounded())
        replay = try ReplaySetting(options.replay)
        replayFailure = options.replayFailure
        replayDurability = options.replayDurability
        guard (1...60_000).contains(options.replayTimeout) else {
            throw GateConfigurationError("--replay-timeout must be between 1 and 60000 ms")
        }
        replayTimeoutMilliseconds = options.replayTimeout

        sessionSecretPaths = options.sessionSecrets.map { SecretFileBytes.path($0, credentialsDirectory: credentialsDirectory) }
        cdnProfilePaths = options.cdnProfiles
        if let text = options.publicURL {
            publicURL = try Self.checkedPublicURL(text)
        }
        manifestOriginCA = options.manifestOriginCA.map { SecretFileBytes.path($0, credentialsDirectory: credentialsDirectory) }
        guard (1...60_000).contains(options.manifestTimeout) else {
            throw GateConfigurationError("--manifest-timeout must be between 1 and 60000 ms")
        }
        manifestTimeoutMilliseconds = options.manifestTimeout
        guard (64 * 1024...16 * 1024 * 1024 * 1024).contains(options.manifestCacheBytes) else {
            throw GateConfigurationError("--manifest-cache-bytes must be between 65536 and 17179869184")
        }
        manifestCacheBytes = options.manifestCacheBytes
        self.credentialsDirectory = credentialsDirectory
        catKeys = []
        for text in options.catKeys { catKeys.append(try CATKeySetting(text, credentialsDirectory: credentialsDirectory)) }
        if let issuer = options.catIssuer {
            guard !catKeys.isEmpty else { throw GateConfigurationError("--cat-issuer without --cat-key: no CAT is read") }
            guard !issuer.isEmpty else { throw GateConfigurationError("--cat-issuer is empty") }
            catIssuer = issuer
        }
        if let audience = options.catAudience {
            guard !catKeys.isEmpty else { throw GateConfigurationError("--cat-audience without --cat-key: no CAT is read") }
            guard !audience.isEmpty else { throw GateConfigurationError("--cat-audience is empty") }
            catAudience = audience
        }
        if let name = options.clientIPHeader { clientIPHeader = try Self.headerName(name, option: "--client-ip-header") }
        if !catKeys.isEmpty {
            // A CAT's carriers must not be another credential's, or one value would be read two ways.
            if tokenParams.contains(CATOrigin.parameterName) || options.sessionParam == CATOrigin.parameterName
                || tokenCookie == CATOrigin.cookieName || options.sessionCookie == CATOrigin.cookieName
                || [tokenHeader, options.sessionHeader].contains(where: { $0?.lowercased() == CATOrigin.headerName.lowercased() })
            {
                throw GateConfigurationError(
                    "with --cat-key, the names cat (query parameter, cookie) and \(CATOrigin.headerName) carry "
                        + "Common Access Tokens: give the token or session another name"
                )
            }
        }
        guard (1...7 * 86_400).contains(options.sessionLifetime) else {
            throw GateConfigurationError("--session-lifetime must be between 1 second and 7 days")
        }
        sessionLifetimeSeconds = options.sessionLifetime
        sessionCookie = try Self.cookieName(options.sessionCookie, option: "--session-cookie")
        sessionParam = options.sessionParam
        sessionHeader = try Self.headerName(options.sessionHeader, option: "--session-header")

        guard (0...10_000_000).contains(options.verdictCacheSize) else {
            throw GateConfigurationError("--verdict-cache-size must be between 0 (off) and 10000000")
        }
        verdictCacheSize = options.verdictCacheSize
        logFormat = options.logFormat
        guard options.shutdownGrace.isFinite, (0...300).contains(options.shutdownGrace) else {
            throw GateConfigurationError("--shutdown-grace must be between 0 and 300 seconds")
        }
        shutdownGraceSeconds = options.shutdownGrace
        do {
            otlpEndpoint = try options.otlpEndpoint.map(OTLPEndpoint.init)
        } catch {
            throw GateConfigurationError(error.description)
        }
        guard options.traceSampleRatio.isFinite, (0...1).contains(options.traceSampleRatio) else {
            throw GateConfigurationError("--trace-sample-ratio must be between 0 and 1")
        }
        traceSampleRatio = options.traceSampleRatio
        // The debugger lets its caller choose the requestor and "now": an
        // oracle that must not face the network the gate serves.
        guard !options.debugger || LoopbackAddress.isLoopback(host) else {
            throw GateConfigurationError(
                "--debugger needs a loopback --listen address (127.0.0.1, ::1); "
                    + "this gate listens on \(options.listen). Run `tokengate debugger` on the machine you look from instead"
            )
        }
        debugger = options.debugger
        guard options.requestTimeout.isFinite, options.requestTimeout >= 0.1, options.requestTimeout <= 600 else {
            throw GateConfigurationError("--request-timeout must be between 0.1 and 600 seconds")
        }
        requestTimeoutMilliseconds = Int64((options.requestTimeout * 1000).rounded())
        if let executor {
            guard let chosen = RequestExecutor(rawValue: executor) else {
                // The value itself is not echoed: an environment variable can hold terminal controls.
                throw GateConfigurationError("TOKENGATE_EXECUTOR must be event-loop or pool")
            }
            self.executor = chosen
        }
        guard (1...1_000_000).contains(options.maxConnections) else {
            throw GateConfigurationError("--max-connections must be between 1 and 1000000")
        }
        guard (0...1_000_000).contains(options.maxConnectionsPerPeer) else {
            throw GateConfigurationError("--max-connections-per-peer must be between 0 (no limit) and 1000000")
        }
        guard (ReportEndpoints.maximumBodyBytes...(1 << 40)).contains(options.maxBodyBytesInFlight) else {
            throw GateConfigurationError("--max-body-bytes-in-flight must be at least \(ReportEndpoints.maximumBodyBytes) (one whole body)")
        }
        limits = ConnectionLimits(
            maximumConnections: options.maxConnections,
            maximumConnectionsPerPeer: options.maxConnectionsPerPeer == 0 ? nil : options.maxConnectionsPerPeer,
            maximumBodyBytesInFlight: options.maxBodyBytesInFlight
        )
    }
}

extension ServeOptions {
    /// The configuration these options make, or the usage error (exit 64) with
    /// which `serve` and `check` both refuse them, in the same words.
    func validatedConfiguration() throws -> GateConfiguration {
        do {
            return try GateConfiguration(self)
        } catch {
            throw ValidationError(error.message)
        }
    }
}

extension GateConfiguration {
    /// `--public-url`: an absolute http(s) URL without query or fragment; its
    /// path (without a trailing `/`) prefixes the manifest route.
    static func checkedPublicURL(_ text: String) throws(GateConfigurationError) -> String {
        let url: CDNURL
        do { url = try CDNURL(parsing: text) } catch {
            throw GateConfigurationError("--public-url \(TerminalText(escaping: text).rendered): \(error.reason)")
        }
        guard url.query == nil, !text.contains("#") else {
            throw GateConfigurationError("--public-url takes a base URL without a query or fragment")
        }
        var base = url.origin + url.path
        while base.hasSuffix("/") { base.removeLast() }
        return base
    }
}
