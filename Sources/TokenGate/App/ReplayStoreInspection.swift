import EntitlementTokens
import EntitlementTokensRedis
import RedisRESP

/// The replay store's part of `tokengate check`: what `serve`'s start-up
/// check does (docs/DESIGN.md#one-time-use-across-a-fleet: connect, log in,
/// write a key the way a media token will), within
/// ``ReplayStoreFactory/startupCheckTimeout``, and what only an operator's
/// look shows: the eviction policy of every data node (docs/DESIGN.md#redis-settings),
/// what each sentinel says (Sentinel), and whether every hash slot has a
/// primary (Cluster). A failure is named by mode and address, as `/readyz` names it.
enum ReplayStoreInspection {
    /// The one eviction policy that never deletes a replay entry: every
    /// `volatile-*` policy evicts exactly the keys with an expiry, which every
    /// replay entry has, and every `allkeys-*` policy any key (docs/REDIS.md).
    static let safePolicy = "noeviction"

    static func inspect(_ setting: ReplaySetting, credentialsDirectory: String?) async -> SetupReport.Section {
        var section = SetupReport.Section(name: "replay-store", title: "replay store (--replay)")
        switch setting {
        case .off:
            section.add(.note, "off", "media tokens are not checked for reuse")
        case .memory:
            section.add(.note, "memory", "one-time use within this process only; behind a load balancer give every gate the same Redis")
        case .redis(let url):
            await inspectRedis(url: url, credentialsDirectory: credentialsDirectory, into: &section)
        }
        return section
    }

    private static func inspectRedis(url: String, credentialsDirectory: String?, into section: inout SetupReport.Section) async {
        var configuration: RedisClientConfiguration
        do {
            configuration = try RedisClientConfiguration(url: url, credentialsDirectory: credentialsDirectory)
        } catch {
            section.add(.problem, "--replay", error.description)
            return
        }
        configuration.operationTimeout = ReplayStoreFactory.startupCheckTimeout
        let target = configuration.target
        switch await ReplayStartupCheck.redis(url: url) {
        case .ready:
            section.add(.ok, target, "answers, accepts the login, and the gate may write its keys (SET … PX under the key prefix)")
        case .unreachable(let reason), .refused(let reason):
            section.add(.problem, target, reason)
            // Nothing below can be asked of a store that will not answer or let the gate in;
            // in Sentinel mode the sentinels may still say why.
            guard case .sentinel = configuration.topology else { return }
        }
        switch configuration.topology {
        case .standalone:
            await inspectPolicy(of: configuration, into: &section)
        case .sentinel(let settings):
            await inspectSentinels(configuration, settings: settings, into: &section)
        case .cluster:
            await inspectCluster(configuration, into: &section)
        }
    }

    /// `CONFIG GET maxmemory-policy` on the one node `configuration` names.
    private static func inspectPolicy(of configuration: RedisClientConfiguration, into section: inout SetupReport.Section) async {
        let target = configuration.target
        let reply: RESPReply
        do {
            reply = try await withClient(configuration) { try await $0.send(RESPCommand("CONFIG", "GET", "maxmemory-policy")) }
        } catch {
            section.add(.problem, target, "\(error)")
            return
        }
        guard case .array(let pair) = reply, pair.count == 2, let policy = pair[1].stringValue else {
            var why = "CONFIG GET answered no policy"
            if case .error = reply { why = "the server refused CONFIG GET (\(reply.text ?? ""))" }
            section.add(.warning, target, "maxmemory-policy unknown: \(why); make sure it is \(safePolicy) (docs/REDIS.md)")
            return
        }
        if policy == safePolicy {
            section.add(.ok, target, "maxmemory-policy \(policy)")
        } else {
            section.add(
                .problem,
                target,
                "maxmemory-policy \(policy) evicts replay entries, and an evicted entry is a replay "
                    + "accepted silently: set maxmemory-policy \(safePolicy) (docs/REDIS.md)"
            )
        }
    }

    /// Each sentinel's primary and replicas: every sentinel answers and names
    /// the same primary; then each data node's eviction policy.
    private static func inspectSentinels(
        _ configuration: RedisClientConfiguration,
        settings: RedisSentinelSettings,
        into section: inout SetupReport.Section
    ) async {
        let name = settings.primaryName
        var primaries: Set<RedisNodeAddress> = []
        var replicas: Set<RedisNodeAddress> = []
        var silent = 0
        for (address, endpoint) in zip(settings.sentinels, configuration.sentinelEndpoints) {
            let single = configuration.standalone(at: address, endpoint: endpoint)
            let subject = "redis-sentinel \(address)"
            do {
                let (named, known) = try await withClient(single) { client in
                    (
                        try await client.send(RESPCommand("SENTINEL", "get-master-addr-by-name", name)),
                        try await client.send(RESPCommand("SENTINEL", "replicas", name))
                    )
                }
                if case .error = named { throw RedisClientError(.errorReply, "SENTINEL get-master-addr-by-name refused: \(named.text ?? "?")") }
                guard let primary = try? SentinelReply.primaryAddress(named) else {
                    section.add(.problem, subject, "knows no primary named \(name)")
                    continue
                }
                primaries.insert(primary)
                let listed = Self.replicas(in: known)
                let healthy = listed.filter { $0.healthy }.map { $0.address }
                replicas.formUnion(healthy)
                let down = listed.filter { !$0.healthy }.map { "\($0.address) (\($0.flags))" }
                section.add(
                    .ok,
                    subject,
                    "names primary \(primary) of \(name), replicas "
                        + (healthy.isEmpty ? "none" : healthy.sorted().map { $0.description }.joined(separator: ", "))
                )
                if !down.isEmpty { section.add(.warning, subject, "replicas down: " + down.joined(separator: ", ")) }
            } catch {
                silent += 1
                section.add(.problem, subject, "\(error)")
            }
        }
        if primaries.count > 1 {
            section.add(
                .problem,
                "redis-sentinel \(name)",
                "the sentinels name different primaries: "
                    + primaries.sorted().map(\.description).joined(separator: ", ")
            )
        }
        if silent < settings.sentinels.count, replicas.isEmpty {
            section.add(.warning, "redis-sentinel \(name)", "no replica answers: a failover has nowhere to go")
        }
        for node in primaries.sorted() + replicas.subtracting(primaries).sorted() {
            await inspectPolicy(of: configuration.standalone(at: node), into: &section)
        }
    }

    /// A replica as `SENTINEL replicas` lists it: a flat `[name, value, …]` per replica.
    static func replicas(in reply: RESPReply) -> [(address: RedisNodeAddress, flags: String, healthy: Bool)] {
        guard case .array(let entries) = reply else { return [] }
        return entries.compactMap { entry in
            guard case .array(let fields) = entry, fields.count.isMultiple(of: 2) else { return nil }
            var values: [String: String] = [:]
            for index in stride(from: 0, to: fields.count, by: 2) {
                if let key = fields[index].stringValue { values[key] = fields[index + 1].stringValue }
            }
            guard let ip = values["ip"], let port = values["port"].flatMap({ Int($0) }),
                let address = RedisNodeAddress(host: ip, port: port)
            else { return nil }
            let flags = values["flags"] ?? ""
            let healthy = !flags.split(separator: ",").contains { ["s_down", "o_down", "disconnected"].contains(String($0)) }
            return (address, flags, healthy)
        }
    }

    /// Every one of the 16384 slots has a primary that answers; then each primary's eviction policy.
    private static func inspectCluster(_ configuration: RedisClientConfiguration, into section: inout SetupReport.Section) async {
        let topology: ClusterTopology?
        do {
            topology = try await withClient(configuration) { try await $0.clusterTopology() }
        } catch {
            section.add(.problem, configuration.target, "\(error)")
            return
        }
        guard let topology else { return }
        let covered = topology.coveredSlotCount
        let primaries = topology.primaries.map(\.description).joined(separator: ", ")
        if covered == ClusterTopology.slotCount {
            section.add(.ok, configuration.target, "all \(ClusterTopology.slotCount) slots covered by primaries \(primaries)")
        } else {
            section.add(
                .problem,
                configuration.target,
                "\(ClusterTopology.slotCount - covered) of \(ClusterTopology.slotCount) slots have no "
                    + "primary that answers (\(uncovered(topology))): media tokens whose key falls there are 503"
            )
        }
        for primary in topology.primaries {
            await inspectPolicy(of: configuration.standalone(at: primary), into: &section)
        }
    }

    /// Runs `body` with a client of its own, closed after it whatever happens.
    private static func withClient<T: Sendable>(
        _ configuration: RedisClientConfiguration,
        _ body: (RedisClient) async throws -> T
    ) async throws -> T {
        let client = try RedisClient(configuration: configuration)
        do {
            let result = try await body(client)
            await client.shutdown()
            return result
        } catch {
            await client.shutdown()
            throw error
        }
    }

    /// "0-5460, 10923-16383".
    static func uncovered(_ topology: ClusterTopology) -> String {
        var gaps: [String] = []
        var next = 0
        for range in topology.ranges {
            if range.slots.lowerBound > next { gaps.append("\(next)-\(range.slots.lowerBound - 1)") }
            next = range.slots.upperBound + 1
        }
        if next < ClusterTopology.slotCount { gaps.append("\(next)-\(ClusterTopology.slotCount - 1)") }
        return "slots " + gaps.joined(separator: ", ")
    }
}
