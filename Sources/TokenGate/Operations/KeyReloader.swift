import EntitlementTokens
import FoundationEssentials
import Logging
import ServiceLifecycle
import Synchronization
import UnixSignals

/// Reloads the trusted keys on SIGHUP and when their files change (their
/// modification times and sizes are polled), without dropping a request:
/// the verifier swaps its ring atomically (docs/DESIGN.md#key-reloads), and
/// the session secrets, CDN profiles and CAT keys are read again with them.
///
/// A failed reload keeps every set in use, logs why, counts
/// `tokengate_key_reloads_total{result="failure"}` and names the failure in
/// `/readyz` until a reload succeeds; a successful one also empties the
/// verdict cache, since every cached verdict was made with the old keys.
final class KeyReloader: Service {
    /// What the key files looked like at the last load: path, size, mtime.
    struct Snapshot: Equatable {
        var files: [String: [Double]] = [:]
    }

    let paths: [String]
    let options: KeyLoadingOptions
    let interval: Duration
    private let verifier: GateVerifier
    private let cache: VerdictCache
    private let readiness: Readiness
    private let metrics: GateMetrics
    private let logger: Logger
    private let lastSnapshot: Mutex<Snapshot>
    /// What is read again with the keys (the CDN profiles, the CAT keys):
    /// every one is read before any is replaced, so a reload where one file
    /// fails keeps them all, the keys included.
    private let companions: [Companion]

    /// A set that reloads with the trusted keys.
    struct Companion: Sendable {
        /// Its name in the "keys reloaded" line, with the number of entries read.
        let name: String
        /// Files whose change starts a reload, as a changed key file does.
        var watched: [String] = []
        /// Reads the files; the closure it returns puts the new set in place.
        let read: @Sendable () throws -> (count: Int, install: @Sendable () -> Void)
        /// Says what the set in place holds (its `installed` step), as at start.
        let announce: @Sendable () -> Void

        /// `installed` runs once the new set is in place (the sample-key warning follows it).
        init<Value: Sendable>(
            _ name: String,
            replacing target: Reloaded<Value>,
            watching watched: [String] = [],
            count: @escaping @Sendable (Value) -> Int,
            read: @escaping @Sendable () throws -> Value,
            installed: @escaping @Sendable (Value) -> Void = { _ in }
        ) {
            self.name = name
            self.watched = watched
            announce = { installed(target.current) }
            self.read = {
                let value = try read()
                return (
                    count(value),
                    {
                        target.replace(with: value)
                        installed(value)
                    }
                )
            }
        }
    }

    init(
        paths: [String],
        options: KeyLoadingOptions,
        interval: Duration = .seconds(5),
        verifier: GateVerifier,
        cache: VerdictCache,
        readiness: Readiness,
        metrics: GateMetrics,
        logger: Logger,
        companions: [Companion] = []
    ) {
        self.companions = companions
        self.paths = paths
        self.options = options
        self.interval = interval
        self.verifier = verifier
        self.cache = cache
        self.readiness = readiness
        self.metrics = metrics
        self.logger = logger
        lastSnapshot = Mutex(Self.snapshot(of: paths + companions.flatMap(\.watched)))
    }

    func run() async throws {
        let signals = await UnixSignalsSequence(trapping: .sighup)
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                group.addTask {
                    for await _ in signals { self.reload(because: "SIGHUP") }
                }
                group.addTask {
                    while !Task.isCancelled {
                        try? await Task.sleep(for: self.interval)
                        if Task.isCancelled { break }
                        self.reloadIfChanged()
                    }
                }
            }
        }
    }

    /// The key paths and the companions' files: a change to any starts a reload.
    private var watchedPaths: [String] { paths + companions.flatMap(\.watched) }

    /// Reloads when a watched file's size or modification time changed since the last load.
    func reloadIfChanged() {
        let current = Self.snapshot(of: watchedPaths)
        guard lastSnapshot.withLock({ $0 != current }) else { return }
        reload(because: "key files changed")
    }

    /// Loads every key again; on success the verifier uses the new ring from
    /// its next request on. Returns whether it succeeded.
    @discardableResult
    func reload(because cause: String) -> Bool {
        // One reload at a time: the snapshot and the ring stay in step.
        lastSnapshot.withLock { snapshot in
            snapshot = Self.snapshot(of: watchedPaths)
            do {
                let ring = try KeyRing.load(paths: paths, options: options)
                let read = try companions.map { try $0.read() }
                try verifier.replaceKeys(with: ring)
                for set in read { set.install() }
                cache.removeAll()
                announce(ring)
                metrics.countKeyReload(success: true)
                readiness.setReloadFailure(nil)
                var metadata: Logger.Metadata = ["cause": .string(cause), "keys": .stringConvertible(ring.keys.count)]
                for (companion, set) in zip(companions, read) { metadata[companion.name] = .stringConvertible(set.count) }
                logger.info("keys reloaded", metadata: metadata)
                if let warning = readiness.sampleKeyWarning { logger.warning("\(warning)") }
                return true
            } catch {
                metrics.countKeyReload(success: false)
                readiness.setReloadFailure("\(error)")
                logger.error(
                    "key reload failed: the previous keys stay in use",
                    metadata: ["cause": .string(cause), "error": .string("\(error)")]
                )
                return false
            }
        }
    }

    /// What the start-up load says, as every reload says it: the trusted
    /// keys (readiness, the key metrics, the skipped files) and each
    /// companion's set.
    func announceStart(_ ring: KeyRing) {
        announce(ring)
        for companion in companions { companion.announce() }
    }

    /// Readiness, `tokengate_keys_loaded`, `tokengate_key_info` and the
    /// skipped files, for the ring now in use.
    private func announce(_ ring: KeyRing) {
        readiness.setTrustedKeys(ring.keys)
        metrics.keysLoaded.record(ring.keys.count)
        metrics.keys.record(trusted: ring.keys)
        KeyNotices.report(ring, logger: logger, metrics: metrics)
    }

    static func snapshot(of paths: [String]) -> Snapshot {
        var snapshot = Snapshot()
        let files = FileManager.default
        func record(_ path: String) {
            guard let status = try? LibC.status(atPath: path) else {
                snapshot.files[path] = [-1]
                return
            }
            snapshot.files[path] = [Double(status.size), status.modificationTime]
        }
        for path in paths {
            record(path)
            if (try? LibC.status(atPath: path))?.kind == .directory,
                let entries = try? files.contentsOfDirectory(atPath: path)
            {
                for entry in entries.sorted() where !entry.hasPrefix(".") { record(path + "/" + entry) }
            }
        }
        return snapshot
    }
}
