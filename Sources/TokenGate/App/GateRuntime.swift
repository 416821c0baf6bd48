import CDNTokens
import EntitlementTokens
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import ServiceLifecycle
import UnixSignals

/// Everything a running gate is made of, built once from its configuration:
/// keys, verifier, replay store, sessions, verdict cache, metrics, readiness,
/// and the services that run beside the HTTP server (key reloads, drain on
/// shutdown).
package final class GateRuntime: Sendable {
    let configuration: GateConfiguration
    package let metrics: GateMetrics
    let readiness: Readiness
    let verifier: GateVerifier
    let cache: VerdictCache
    let gate: AuthGate
    let reloader: KeyReloader
    let replay: ReplayStoreFactory.Made
    let logger: Logger
    /// The web debugger's routes, with `--debugger`.
    let debugger: DebuggerEndpoints?
    /// The CDN profiles of `--cdn-profile` (empty without), reloaded with the keys.
    let cdnProfiles: Reloaded<CDNProfileSet>
    /// CDN pastes on `/v1/inspect` and the debugger, checked against `cdnProfiles`.
    let cdnInspection: CDNPasteInspection
    /// With `--otlp-endpoint`: the decision spans' way out.
    let spans: SpanExporter?
    /// With `--cdn-profile`: the manifest route's origin client and the answers it shares.
    let manifestOrigin: OriginHTTPClient?
    let manifestCache: SharedAnswerCache<ManifestService.OriginResult>

    /// Loads the keys and session secrets and builds the gate. `clock` is
    /// injectable for tests; `keyPollInterval` is how often key files are checked.
    package convenience init(
        configuration: GateConfiguration,
        logger: Logger,
        clock: @escaping @Sendable () -> TokenTimestamp = TokenTimestamp.now,
        keyPollInterval: Duration = .seconds(5)
    ) throws(GateConfigurationError) {
        try self.init(
            configuration: configuration,
            logger: logger,
            clock: clock,
            keyPollInterval: keyPollInterval,
            replay: ReplayStoreFactory.make(
                configuration.replay,
                timeout: .milliseconds(configuration.replayTimeoutMilliseconds),
                durability: configuration.replayDurability,
                // Every gate within a leeway of the issuer's clock: two gates within two.
                clockSkew: .milliseconds(2 * configuration.leewayMilliseconds)
            )
        )
    }

    /// As the initializer, with the replay store given (tests put a
    /// store that fails here, to see the gate fail closed or open).
    init(
        configuration: GateConfiguration,
        logger: Logger,
        clock: @escaping @Sendable () -> TokenTimestamp,
        keyPollInterval: Duration,
        replay: ReplayStoreFactory.Made,
        hooks: AuthGate.Hooks = .init()
    ) throws(GateConfigurationError) {
        self.configuration = configuration
        self.logger = logger
        self.replay = replay
        let metrics = GateMetrics(replayOutstanding: replay.outstanding)
        self.metrics = metrics
        let ring = try KeyRing.loadAtStart(paths: configuration.keyPaths, options: configuration.keyLoading)
        let store = replay.store.map {
            GuardedReplayStore(
                $0,
                failure: configuration.replayFailure,
                events: metrics,
                logger: logger
            )
        }
        // The one deadline of a replay check (docs/DESIGN.md#one-deadline-per-replay-check),
        // set here and passed down; no layer below narrows it.
        let replayDeadline = Duration.milliseconds(configuration.replayTimeoutMilliseconds)
        let policy = VerificationPolicy(
            requestorID: configuration.requestorID,
            allowedMVPDs: configuration.allowedMVPDs.map { $0.sorted() },
            leewayMilliseconds: configuration.leewayMilliseconds,
            replayStore: store,
            replayDeadline: replayDeadline,
            clock: clock
        )
        verifier = GateVerifier(ring: ring, policy: policy)
        cache = VerdictCache(maximumEntries: configuration.verdictCacheSize, events: metrics)
        let sessions =
            configuration.sessionSecretPaths.isEmpty
            ? nil
            : Reloaded(try PlaybackSessions.load(paths: configuration.sessionSecretPaths, lifetimeSeconds: configuration.sessionLifetimeSeconds))
        let catKeys = Reloaded(try Self.catKeySet(configuration))
        let cat =
            configuration.catKeys.isEmpty
            ? nil
            : CATOrigin(
                keys: catKeys,
                issuer: configuration.catIssuer,
                audience: configuration.catAudience,
                leewaySeconds: configuration.leewayMilliseconds / 1000,
                replayStore: store,
                replayDeadline: replayDeadline
            )
        gate = AuthGate(
            configuration: configuration,
            verifier: verifier,
            cache: cache,
            sessions: sessions,
            cat: cat,
            clock: clock,
            hooks: hooks
        )
        let profileStore: Reloaded<CDNProfileSet>
        do {
            profileStore = Reloaded(try CDNProfileLoading.load(configuration))
        } catch {
            throw GateConfigurationError(error.message)
        }
        cdnProfiles = profileStore
        if configuration.cdnProfilePaths.isEmpty {
            manifestOrigin = nil
        } else {
            do { manifestOrigin = try OriginHTTPClient(trustRootsFile: configuration.manifestOriginCA) } catch {
                throw GateConfigurationError("--manifest-origin-ca: \(error)")
            }
        }
        manifestCache = SharedAnswerCache(maximumBytes: configuration.manifestCacheBytes)
        let cdnInspection = CDNPasteInspection(
            profiles: { profileStore.current },
            leewaySeconds: configuration.leewayMilliseconds / 1000
        )
        self.cdnInspection = cdnInspection
        debugger =
            configuration.debugger
            ? DebuggerEndpoints(
                keys: verifier,
                hosts: DebuggerHosts(listenHost: configuration.host, port: configuration.port),
                cdn: cdnInspection,
                catKeys: { catKeys.current.keys },
                sessionSecrets: { sessions?.current.secrets },
                clock: clock
            )
            : nil
        readiness = Readiness(replayProbe: replay.probe)
        spans = configuration.otlpEndpoint.map {
            SpanExporter(endpoint: $0, sampler: TraceSampler(ratio: configuration.traceSampleRatio), metrics: metrics, logger: logger)
        }
        reloader = KeyReloader(
            paths: configuration.keyPaths,
            options: configuration.keyLoading,
            interval: keyPollInterval,
            verifier: verifier,
            cache: cache,
            readiness: readiness,
            metrics: metrics,
            logger: logger,
            companions: Self.reloadedWithKeys(
                configuration,
                cdnProfiles: cdnProfiles,
                catKeys: catKeys,
                sessions: sessions,
                readiness: readiness,
                inventory: metrics.keys
            )
        )
        reloader.announceStart(ring)
    }

    /// The keys of `--cat-key` with no CAT readings yet, as many kept as
    /// `--verdict-cache-size` allows (docs/DESIGN.md#cat-at-the-origin).
    private static func catKeySet(_ configuration: GateConfiguration) throws(GateConfigurationError) -> CATKeySet {
        CATKeySet(keys: try CATKeyLoading.load(configuration.catKeys), readings: CATReadings(maximumEntries: configuration.verdictCacheSize))
    }

    /// The sets a reload reads again with the trusted keys: the session
    /// secrets, the CDN profiles (and their keys) and `--cat-key`'s keys,
    /// when configured.
    private static func reloadedWithKeys(
        _ configuration: GateConfiguration,
        cdnProfiles: Reloaded<CDNProfileSet>,
        catKeys: Reloaded<CATKeySet>,
        sessions: Reloaded<PlaybackSessions>?,
        readiness: Readiness,
        inventory: KeyInventory
    ) -> [KeyReloader.Companion] {
        var companions: [KeyReloader.Companion] = []
        if let sessions {
            companions.append(
                .init(
                    "session_secrets",
                    replacing: sessions,
                    watching: configuration.sessionSecretPaths,
                    count: { _ in configuration.sessionSecretPaths.count },
                    read: {
                        try PlaybackSessions.load(
                            paths: configuration.sessionSecretPaths,
                            lifetimeSeconds: configuration.sessionLifetimeSeconds
                        )
                    },
                    installed: { _ in inventory.record(sessionSecrets: configuration.sessionSecretPaths.count) }
                )
            )
        }
        if !configuration.cdnProfilePaths.isEmpty {
            companions.append(
                .init(
                    "cdn_profiles",
                    replacing: cdnProfiles,
                    watching: configuration.cdnProfilePaths,
                    count: { $0.profiles.count },
                    read: { try CDNProfileLoading.load(configuration) },
                    installed: { profiles in
                        readiness.setSampleKeyFiles(
                            CDNSampleKeys.found(in: profiles, credentialsDirectory: configuration.credentialsDirectory),
                            of: "cdn_profiles"
                        )
                        inventory.record(cdn: profiles)
                    }
                )
            )
        }
        if !configuration.catKeys.isEmpty {
            companions.append(
                .init(
                    "cat_keys",
                    replacing: catKeys,
                    watching: configuration.catKeys.map(\.path),
                    count: { $0.keys.count },
                    read: { try Self.catKeySet(configuration) },
                    installed: { keySet in
                        readiness.setSampleKeyFiles(CDNSampleKeys.found(in: configuration.catKeys), of: "cat_keys")
                        inventory.record(cat: keySet.keys)
                    }
                )
            )
        }
        return companions
    }

    /// The HTTP application, listening where the configuration says unless
    /// `port` overrides it (0: any free port, for tests).
    func application(
        port: Int? = nil,
        onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        let manifestRoute =
            (configuration.publicURL.flatMap { try? CDNURL(parsing: $0).path } ?? "")
            .trimmingSuffix("/") + "/v1/manifest"
        let playback =
            configuration.cdnProfilePaths.isEmpty
            ? nil
            : PlaybackEndpoints(
                exchange: PlaybackExchange(
                    gate: gate,
                    profiles: cdnProfiles,
                    manifestRoute: configuration.publicURL.map { $0 + "/v1/manifest" }
                ),
                deviceHeader: HTTPField.Name(configuration.deviceHeader)!,
                clock: gate.clock
            )
        let manifests = manifestOrigin.map { origin in
            ManifestEndpoint(
                service: ManifestService(
                    gate: gate,
                    profiles: cdnProfiles,
                    origin: origin,
                    cache: manifestCache,
                    route: manifestRoute,
                    originDeadline: .milliseconds(configuration.manifestTimeoutMilliseconds),
                    events: self.metrics
                ),
                deviceHeader: HTTPField.Name(configuration.deviceHeader)!,
                clock: gate.clock
            )
        }
        let responder = GateResponder(
            gate: gate,
            reader: GateRequestReader(configuration: configuration),
            reports: ReportEndpoints(verifier: verifier, cdn: cdnInspection, clock: gate.clock),
            playback: playback,
            manifests: manifests,
            mounted: debugger,
            metrics: metrics,
            readiness: readiness,
            spans: spans,
            logger: logger
        )
        let limiter = ConnectionLimiter(limits: configuration.limits, metrics: metrics)
        let requestTimeout = TimeAmount.milliseconds(configuration.requestTimeoutMilliseconds)
        let metrics = self.metrics
        let executor = configuration.executor
        let readiness = self.readiness
        let answerOnTheLoop: @Sendable (HTTPRequest) -> DirectAnswerHandler.Claim? = { [responder] in responder.answerOnTheLoop($0) }
        return Application(
            responder: responder,
            server: HTTPServerBuilder { responder in
                LimitedHTTP1Channel(
                    responder: responder,
                    configuration: ServerLimits.http1,
                    requestTimeout: requestTimeout,
                    limiter: limiter,
                    metrics: metrics,
                    executor: executor,
                    readiness: readiness,
                    answerOnTheLoop: answerOnTheLoop
                )
            },
            configuration: ApplicationConfiguration(
                address: .hostname(configuration.host, port: port ?? configuration.port),
                serverName: nil
            ),
            onServerRunning: onServerRunning,
            logger: logger
        )
    }

    /// Serves until SIGTERM or SIGINT: then readiness turns 503 and each
    /// answer closes its connection, and after the grace period the server
    /// stops accepting and in-flight requests finish.
    func run() async throws {
        try await serviceGroup(signals: [.sigterm, .sigint]).run()
    }

    /// The services of a running gate under one group: the HTTP server, key
    /// reloads, the drain, the replay store's closing and the span export.
    /// Services stop in reverse order: the drain first (readiness 503 and each
    /// answer closing its connection, then the grace period), then the server,
    /// then the replay store's connections, and the last spans last.
    func serviceGroup(
        port: Int? = nil,
        signals: [UnixSignal] = [],
        onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
    ) -> ServiceGroup {
        let closeStore = ReplayStoreCloser(serve: replay.serve)
        let drain = DrainService(
            readiness: readiness,
            grace: .milliseconds(Int64(configuration.shutdownGraceSeconds * 1000)),
            logger: logger
        )
        // The span exporter is told last of all, so the last requests' spans still leave.
        let exporter = spans.map { [ServiceGroupConfiguration.ServiceConfiguration(service: $0)] } ?? []
        return ServiceGroup(
            configuration: .init(
                services: exporter + [
                    .init(service: closeStore), .init(service: application(port: port, onServerRunning: onServerRunning)),
                    .init(service: reloader), .init(service: drain),
                ],
                gracefulShutdownSignals: signals,
                logger: logger
            )
        )
    }

    /// Asks the replay store once before serving (docs/DESIGN.md#one-time-use-across-a-fleet): a Redis that
    /// refuses the login is a start-up error; one that does not answer yet
    /// only keeps readiness red.
    func checkReplayStore() async -> ReplayStartupCheck {
        await replay.startupCheck()
    }

    /// Reloads the keys now (what SIGHUP does).
    @discardableResult
    func reloadKeys() -> Bool { reloader.reload(because: "requested") }
}

extension String {
    fileprivate func trimmingSuffix(_ suffix: Character) -> String {
        var text = self
        while text.last == suffix { text.removeLast() }
        return text
    }
}
