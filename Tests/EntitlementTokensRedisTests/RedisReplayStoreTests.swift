import EntitlementTokens
import Foundation
import IntegrationSupport
import NIOPosix
import RedisRESP
import Testing
import TokenTestSupport

@testable import EntitlementTokensRedis

/// The store against a real redis-server: atomicity, the key and its expiry,
/// login, databases and the refusals Redis can give.
extension RedisIntegrationTests {
    @Suite("Redis: replay store on a real server")
    struct RedisReplayStoreTests {
        @Test("8 tasks × 2,000 identities through two stores: exactly one acceptance each")
        func exactlyOnce() async throws {
            try await withRedisServer { server in
                // Two stores, so two pools: the atomicity is Redis's, not a lock in one process.
                let stores = try (0..<2).map { _ in try makeStore(server.url, timeout: .seconds(2)) }
                var generator = SeededGenerator(seed: 14)
                let identities = (0..<2_000).map { _ in randomIdentity(using: &generator) }
                let until = timestamp(plus: 600_000)
                let now = timestamp()
                let decisions = try await withThrowingTaskGroup(of: [ReplayDecision].self) { group in
                    for task in 0..<8 {
                        group.addTask {
                            var decisions: [ReplayDecision] = []
                            decisions.reserveCapacity(identities.count)
                            // Half the tasks walk backwards, so attempts meet from both ends.
                            for index in task.isMultiple(of: 2) ? Array(identities.indices) : identities.indices.reversed() {
                                decisions.append(await stores[task % 2].accept(identities[index], until: until, now: now))
                            }
                            return task.isMultiple(of: 2) ? decisions : decisions.reversed()
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                for index in identities.indices {
                    let outcomes = decisions.map { $0[index] }
                    #expect(outcomes.filter { $0 == .accepted }.count == 1, "identity \(index): \(outcomes)")
                    #expect(outcomes.filter { $0 == .replayed }.count == 7, "identity \(index): \(outcomes)")
                }
                let admin = try adminClient(server.url)
                #expect(try await admin.integer("DBSIZE") == 2_000)
                for store in stores { await store.shutdown() }
                await admin.shutdown()
            }
        }

        @Test(
            "the key is the prefix and Base64url SHA-256; it lives until − now + the clock skew from the write, whatever Redis's clock; it goes then"
        )
        func keyAndExpiry() async throws {
            try await withRedisServer { server in
                let skewed = try makeStore(server.url, prefix: "gate:", clockSkew: .seconds(20))
                let admin = try adminClient(server.url)
                let digest = (0..<32).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
                let identity = ReplayIdentity(digest: digest)
                let key = "gate:" + ReplayKeyTests.foundationBase64URL(digest)
                // The writer's clock an hour behind Redis's: an instant of it
                // would be Redis's past, a difference of two readings is not.
                let behind = timestamp(plus: -3_600_000)
                let until = behind.adding(milliseconds: 60_000)!
                #expect(await skewed.accept(identity, until: until, now: behind) == .accepted)
                #expect(try await admin.command("GET", key) == .bulkString(Array("1".utf8)))
                let ttl = try #require(try await admin.integer("PTTL", key))
                #expect(ttl > 75_000 && ttl <= 80_000, "PTTL \(ttl) ms")
                #expect(await skewed.accept(identity, until: until, now: behind) == .replayed)
                await skewed.shutdown()

                // A short-lived token, and no skew allowed: once Redis has dropped the entry,
                // the store does not remember it (an expired token is refused before this check).
                let store = try makeStore(server.url, prefix: "gate:", clockSkew: .zero)
                let brief = ReplayIdentity(digest: digest.reversed())
                #expect(await store.accept(brief, until: timestamp(plus: 150), now: timestamp()) == .accepted)
                #expect(await store.accept(brief, until: timestamp(plus: 150), now: timestamp()) == .replayed)
                try await Task.sleep(for: .milliseconds(400))
                #expect(try await admin.integer("EXISTS", "gate:" + ReplayKeyTests.foundationBase64URL(digest.reversed())) == 0)
                #expect(await store.accept(brief, until: timestamp(plus: 150), now: timestamp()) == .accepted)

                // An expiry already past is sent as the shortest lifetime PX
                // takes, 1 ms: accepted, never an error reply.
                let past = ReplayIdentity(digest: Array(digest.prefix(16) + digest.prefix(16)))
                #expect(await store.accept(past, until: TokenTimestamp(millisecondsSince1970: 0)!, now: timestamp()) == .accepted)
                let pastToo = ReplayIdentity(digest: Array(digest.suffix(16) + digest.suffix(16)))
                #expect(await store.accept(pastToo, until: timestamp(plus: -10_000), now: timestamp()) == .accepted)
                await store.shutdown()
                await admin.shutdown()
            }
        }

        @Test("requirepass: the right password works; a wrong or missing one is a clear login error")
        func password() async throws {
            try await withRedisServer(["--requirepass", "s3cret pass"]) { server in
                let good = try makeStore("redis://:s3cret%20pass@127.0.0.1:\(server.port)")
                try await good.checkHealth()
                #expect(await good.ping())
                var generator = SeededGenerator(seed: 1)
                #expect(await good.accept(randomIdentity(using: &generator), until: timestamp(plus: 60_000), now: timestamp()) == .accepted)

                let wrong = try makeStore("redis://:wrong@127.0.0.1:\(server.port)", timeout: .seconds(1))
                let wrongFailure = try #require(await wrong.healthFailure())
                #expect(wrongFailure.code == .authenticationFailed)
                #expect(wrongFailure.message.contains("WRONGPASS"), "\(wrongFailure)")
                #expect(!wrongFailure.message.contains("wrong@"), "the password leaked: \(wrongFailure)")
                #expect(!(await wrong.ping()))
                let decision = await wrong.accept(randomIdentity(using: &generator), until: timestamp(plus: 60_000), now: timestamp())
                #expect(decision.isUnavailable && decision.reason.contains("authenticationFailed"), "\(decision)")

                // A connection is handed out only once its start-up is over:
                // one refused at login never opens (its pool backs off).
                let budget = OutstandingBudget(maxRequests: 10, maxBytes: 1000)
                let refusedLogin = try RedisClientConfiguration(url: "redis://:wrong@127.0.0.1:\(server.port)")
                let openFailure = await #expect(throws: RedisClientError.self) {
                    try await RedisConnection.open(
                        configuration: refusedLogin,
                        sslContext: nil,
                        group: MultiThreadedEventLoopGroup.singleton,
                        budget: budget
                    ).get()
                }
                #expect(openFailure?.code == .authenticationFailed)
                let opened = try await RedisConnection.open(
                    configuration: RedisClientConfiguration(url: "redis://:s3cret%20pass@127.0.0.1:\(server.port)"),
                    sslContext: nil,
                    group: MultiThreadedEventLoopGroup.singleton,
                    budget: budget
                ).get()
                opened.close()

                let none = try makeStore(server.url, timeout: .seconds(1))
                let noneFailure = try #require(await none.healthFailure(), "no password, yet PING answered")
                #expect(noneFailure.code == .authenticationFailed)
                #expect(noneFailure.message.contains("wants a password"), "\(noneFailure)")
                for store in [good, wrong, none] { await store.shutdown() }
            }
        }

        @Test(
            "an ACL user logs in with AUTH user pass; without +set, or without the prefix's keys, the write is refused (NOPERM) and the write check says so"
        )
        func aclUser() async throws {
            try await withRedisServer { server in
                let admin = try adminClient(server.url)
                #expect(try await admin.command("ACL", "SETUSER", "gate", "on", ">gatepw", "~tokeninspect:replay:*", "+set", "+ping").isOK)
                #expect(try await admin.command("ACL", "SETUSER", "reader", "on", ">readpw", "~*", "+get", "+ping").isOK)
                #expect(try await admin.command("ACL", "SETUSER", "elsewhere", "on", ">elsepw", "~other:*", "+set", "+ping").isOK)
                var generator = SeededGenerator(seed: 2)
                let gate = try makeStore("redis://gate:gatepw@127.0.0.1:\(server.port)")
                #expect(await gate.accept(randomIdentity(using: &generator), until: timestamp(plus: 60_000), now: timestamp()) == .accepted)
                try await gate.checkWriteAccess()
                // The check's key holds its prefix and expires within 10 s; twice is fine (no NX).
                let ttl = try #require(try await admin.integer("PTTL", gate.writeCheckKey))
                #expect(ttl > 0 && ttl <= 10_000, "PTTL \(ttl)")
                try await gate.checkWriteAccess()
                for (user, password) in [("reader", "readpw"), ("elsewhere", "elsepw")] {
                    let store = try makeStore("redis://\(user):\(password)@127.0.0.1:\(server.port)")
                    try await store.checkHealth()  // PING passes …
                    let decision = await store.accept(randomIdentity(using: &generator), until: timestamp(plus: 60_000), now: timestamp())
                    #expect(decision.isUnavailable && decision.reason.contains("NOPERM"), "\(user): \(decision)")
                    do throws(RedisClientError) {  // … the write check does not
                        try await store.checkWriteAccess()
                        Issue.record("\(user): the write check passed")
                    } catch {
                        #expect(error.code == .errorReply && error.message.contains("NOPERM"), "\(user): \(error)")
                    }
                    await store.shutdown()
                }
                await gate.shutdown()
                await admin.shutdown()
            }
        }

        @Test("SELECT: the entry is in the URL's database and no other; a database that does not exist is refused")
        func database() async throws {
            try await withRedisServer { server in
                let store = try makeStore(server.url + "/3")
                var generator = SeededGenerator(seed: 3)
                #expect(await store.accept(randomIdentity(using: &generator), until: timestamp(plus: 60_000), now: timestamp()) == .accepted)
                let database3 = try adminClient(server.url + "/3")
                let database0 = try adminClient(server.url)
                #expect(try await database3.integer("DBSIZE") == 1)
                #expect(try await database0.integer("DBSIZE") == 0)

                let missing = try makeStore(server.url + "/99", timeout: .seconds(1))
                let failure = try #require(await missing.healthFailure(), "SELECT 99 succeeded")
                #expect(failure.code == .databaseSelectionFailed, "\(failure)")
                for store in [store, missing] { await store.shutdown() }
                for client in [database3, database0] { await client.shutdown() }
            }
        }

        @Test("maxmemory 1mb under noeviction, filled: OOM is unavailable, never an acceptance; nothing is evicted")
        func outOfMemory() async throws {
            try await withRedisServer(["--maxmemory", "1mb", "--maxmemory-policy", "noeviction"]) { server in
                let store = try makeStore(server.url, timeout: .seconds(1))
                var generator = SeededGenerator(seed: 4)
                let until = timestamp(plus: 600_000)
                var accepted: [ReplayIdentity] = []
                var refusal: ReplayDecision?
                for _ in 0..<200_000 {
                    let identity = randomIdentity(using: &generator)
                    let decision = await store.accept(identity, until: until, now: timestamp())
                    if decision == .accepted {
                        accepted.append(identity)
                    } else {
                        refusal = decision
                        break
                    }
                }
                let reason = try #require(refusal).reason
                #expect(reason.contains("OOM"), "\(reason)")
                // Full: new tokens are refused with OOM, though Redis takes
                // some again whenever its own memory shrinks below the limit
                // (a finished rehash frees a table); a token already accepted
                // is never accepted again.
                var refused = 0
                for _ in 0..<200 {
                    let identity = randomIdentity(using: &generator)
                    let decision = await store.accept(identity, until: until, now: timestamp())
                    if decision == .accepted {
                        accepted.append(identity)
                    } else {
                        #expect(decision.reason.contains("OOM"), "\(decision)")
                        refused += 1
                    }
                }
                #expect(refused > 0, "nothing refused while full")
                for identity in accepted {
                    let decision = await store.accept(identity, until: until, now: timestamp())
                    #expect(decision == .replayed || decision.reason.contains("OOM"), "\(decision)")
                }
                // Given room again, nothing was evicted: every entry still stops its replay.
                let admin = try adminClient(server.url)
                #expect(try await admin.command("CONFIG", "SET", "maxmemory", "0").isOK)
                var replayed = 0
                for identity in accepted where await store.accept(identity, until: until, now: timestamp()) == .replayed {
                    replayed += 1
                }
                #expect(replayed == accepted.count)
                #expect(await store.accept(randomIdentity(using: &generator), until: until, now: timestamp()) == .accepted)
                await admin.shutdown()
                await store.shutdown()
            }
        }

        @Test("a read-only replica: READONLY is unavailable and the connection is dropped; promoted, it accepts")
        func readOnlyReplica() async throws {
            let primaryPort = try RedisServer.freePort()  // nothing listens: the replica stays read-only
            try await withRedisServer(["--replicaof", "127.0.0.1", String(primaryPort)]) { server in
                let store = try makeStore(server.url)
                var generator = SeededGenerator(seed: 5)
                let decision = await store.accept(randomIdentity(using: &generator), until: timestamp(plus: 60_000), now: timestamp())
                #expect(decision.isUnavailable && decision.reason.contains("READONLY"), "\(decision)")
                // The store dropped the connection that was answered READONLY, so a failover
                // behind the same address is followed: no connection whose last command was a
                // SET is left (the pool's others are dropped the same way at their first write).
                let admin = try adminClient(server.url)
                try await Task.sleep(for: .milliseconds(100))
                guard case .bulkString(let list) = try await admin.command("CLIENT", "LIST") else {
                    Issue.record("CLIENT LIST did not answer a bulk string")
                    return
                }
                #expect(!String(decoding: list, as: UTF8.self).contains(" cmd=set "), "\(String(decoding: list, as: UTF8.self))")
                #expect(await store.ping())  // it answers: readiness is about answering, the write is refused per token
                // Promoted: the same store accepts again.
                #expect(try await admin.command("REPLICAOF", "NO", "ONE").isOK)
                #expect(await store.accept(randomIdentity(using: &generator), until: timestamp(plus: 60_000), now: timestamp()) == .accepted)
                await store.shutdown()
                await admin.shutdown()
            }
        }
    }
}

/// The entry's lifetime and the command that carries it, without a server
/// (docs/DESIGN.md#clocks-and-one-time-use).
@Suite("Redis: a replay entry's lifetime")
struct RedisReplayLifetimeTests {
    static let skew: Int64 = 60_000

    /// Issue 47: a gate 20 s behind the issuer and Redis accepts a token that
    /// expired 40 s ago (20 s by its clock, inside the 30 s leeway). The entry
    /// lives the 10 s the gate has left plus twice the leeway, from the write,
    /// whatever instant either clock shows.
    @Test func theLifetimeIsTheWritersOwnDifferencePlusTheSkew() {
        let expiry = timestamp()
        for offset: Int64 in [-20_000, 0, 20_000, -3_600_000, 3_600_000] {
            let now = expiry.adding(milliseconds: 20_000 + offset)!
            let until = expiry.adding(milliseconds: 30_000 + offset)!
            #expect(RedisReplayStore.lifetime(until: until, now: now, clockSkew: Self.skew) == 70_000, "offset \(offset)")
        }
        // Past `until` (never for a token the verifier accepted): the skew alone, and never 0, which PX refuses.
        #expect(RedisReplayStore.lifetime(until: expiry, now: expiry.adding(milliseconds: 5_000)!, clockSkew: Self.skew) == 60_000)
        #expect(RedisReplayStore.lifetime(until: expiry, now: expiry.adding(milliseconds: 5_000)!, clockSkew: 0) == 1)
        #expect(RedisReplayStore.lifetime(until: .latest, now: expiry, clockSkew: Self.skew) > 0)
    }

    /// The gate's skew is twice its leeway: a writer a leeway ahead of the
    /// issuer, a reader a leeway behind. The reader accepts until the
    /// writer's clock reads expiry + 3 leeways; the entry lives exactly that long.
    @Test func theEntryOutlivesTheSlowestReader() {
        let leeway: Int64 = 30_000
        let expiry = timestamp()
        // The writer, a leeway ahead, accepts the token at its last moment or earlier.
        for writtenAt: Int64 in [-400_000, -1_000, 0, leeway] {
            let lifetime = RedisReplayStore.lifetime(
                until: expiry.adding(milliseconds: leeway)!,
                now: expiry.adding(milliseconds: writtenAt)!,
                clockSkew: 2 * leeway
            )
            // On the writer's clock the reader's last acceptance is expiry + 3 leeways.
            #expect(writtenAt + lifetime >= 3 * leeway, "written at \(writtenAt): \(lifetime) ms")
        }
    }

    @Test func theCommandIsARelativeSetNX() {
        let command = RedisReplayStore.setCommand(Array("k".utf8), lifetime: 70_000, onlyIfAbsent: true)
        #expect(command == RESPCommand("SET", "k", "1", "NX", "PX", "70000"))
        let check = RedisReplayStore.setCommand(Array("k".utf8), lifetime: 10_000, onlyIfAbsent: false)
        #expect(check == RESPCommand("SET", "k", "1", "PX", "10000"))
    }
}
