import ArgumentParser
import EntitlementTokensRedis
import Foundation
import Testing

@testable import GateTestSupport
@testable import TokenGate

@Suite struct ConfigurationTests {
    let key = GateFixtures.publicKey

    func refusal(_ arguments: [String]) -> String? {
        do {
            _ = try GateConfiguration(ServeOptions.parse(arguments))
            return nil
        } catch let error as GateConfigurationError {
            return error.message
        } catch {
            return "\(error)"
        }
    }

    @Test func refusesToStartWithoutARequestor() {
        let message = refusal(["--key", key, "--resource", "TNT"])
        #expect(message?.contains("--requestor") == true)
        #expect(message?.contains("--allow-any-requestor") == true)
    }

    @Test func refusesToStartWithoutAResourceSource() {
        let message = refusal(["--key", key, "--requestor", "TNT"])
        #expect(message?.contains("--resource") == true)
        #expect(message?.contains("--allow-any-resource") == true)
    }

    /// A relative secret path outside systemd: the error says where it was looked for, and where it would be under systemd.
    @Test func aMissingRelativeSecretNamesWhereItWasLookedFor() throws {
        let configuration = try GateConfiguration(
            ServeOptions.parse([
                "--key", key, "--requestor", "TNT", "--resource", "TNT",
                "--session-secret", "session.key",
            ]),
            credentialsDirectory: nil
        )
        #expect(configuration.sessionSecretPaths == ["session.key"])
        let message: String
        do {
            _ = try GateRuntime(configuration: configuration, logger: LogCapture().logger)
            message = "started"
        } catch {
            message = error.message
        }
        #expect(message.contains("--session-secret session.key: not a readable regular file"), "\(message)")
        #expect(message.contains("looked for in the working directory \(FileManager.default.currentDirectoryPath)"), "\(message)")
        #expect(message.contains("$CREDENTIALS_DIRECTORY"), "\(message)")
        // Under systemd the relative path is read in the credentials folder, whose path the error then names.
        let underSystemd = try GateConfiguration(
            ServeOptions.parse([
                "--key", key, "--requestor", "TNT", "--resource", "TNT",
                "--session-secret", "session.key",
            ]),
            credentialsDirectory: "/run/credentials/tokengate.service"
        )
        #expect(underSystemd.sessionSecretPaths == ["/run/credentials/tokengate.service/session.key"])
    }

    @Test func refusesToStartWithoutKeys() {
        #expect(refusal(["--requestor", "TNT", "--resource", "TNT"])?.contains("--key") == true)
    }

    @Test func refusesContradictions() {
        #expect(refusal(["--key", key, "--requestor", "TNT", "--allow-any-requestor", "--resource", "T"]) != nil)
        #expect(refusal(["--key", key, "--requestor", "TNT", "--resource", "T", "--resource-header", "X-R"]) != nil)
        #expect(refusal(["--key", key, "--requestor", "TNT", "--resource", "T", "--allow-any-resource"]) != nil)
    }

    /// docs/DESIGN.md#high-availability: the URL names the mode; the durability is a setting of its own.
    @Test func theReplayURLNamesTheRedisMode() throws {
        for url in [
            "redis://127.0.0.1:6379", "rediss://h:6380/0", "redis-sentinel://a:26379,b:26379#mymaster",
            "rediss-sentinel://a:26379/1#mymaster", "redis-cluster://a:7000,b:7001", "rediss-cluster://a:7000",
        ] {
            let configuration = try GateFixtures.configuration(["--replay", url])
            #expect(configuration.replay == .redis(url))
            #expect(configuration.replayDurability == .primary)
        }
        #expect(try GateFixtures.configuration(["--replay-durability", "replicated"]).replayDurability == .replicated)
        #expect(throws: (any Error).self) { try GateFixtures.configuration(["--replay-durability", "quorum"]) }
        #expect(throws: GateConfigurationError.self) { try GateFixtures.configuration(["--replay", "redis-shards://a:1"]) }
        // The store a sentinel URL makes, and the durability it is given, reach the library.
        let made = try ReplayStoreFactory.make(
            .redis("redis-sentinel://127.0.0.1:1#mymaster"),
            timeout: .milliseconds(50),
            durability: .replicated
        )
        #expect(made.store != nil)
    }

    /// A Sentinel client decides nothing until its run() runs (docs/DESIGN.md#the-redis-clients-state-machines):
    /// /readyz says so until the gate's ServiceGroup runs it, then names the real trouble (nothing listens on port 1).
    @Test func aSentinelStoreIsNotReadyUntilTheGateRunsItsClient() async throws {
        let made = try ReplayStoreFactory.make(.redis("redis-sentinel://127.0.0.1:1#mymaster"), timeout: .milliseconds(50))
        let before = await made.probe()
        #expect(before?.contains("[notRunning]") == true, "\(before ?? "ready")")
        let whileServing = await withTaskGroup(of: Void.self) { group -> String? in
            group.addTask { await made.serve() }
            var reason = await made.probe()
            for _ in 0..<200 where reason?.contains("[notRunning]") == true {
                try? await Task.sleep(for: .milliseconds(10))
                reason = await made.probe()
            }
            group.cancelAll()
            return reason
        }
        #expect(whileServing != nil && whileServing?.contains("[notRunning]") == false, "\(whileServing ?? "ready")")
    }

    @Test func theLabelledDoorsOpen() throws {
        let configuration = try GateConfiguration(ServeOptions.parse(["--key", key, "--allow-any-requestor", "--allow-any-resource"]))
        #expect(configuration.requestorID == nil)
        #expect(configuration.resource == .any)
    }

    @Test func safeDefaults() throws {
        let configuration = try GateFixtures.configuration()
        #expect(configuration.host == "127.0.0.1")
        #expect(configuration.port == 8089)
        #expect(configuration.tokenParams == ["token", "auth"])
        #expect(configuration.deviceHeader == "X-Token-Device-Id")
        #expect(configuration.resource == .header("X-Token-Resource"))
        #expect(configuration.replay == .memory)
        #expect(configuration.replayFailure == .closed)
        #expect(configuration.replayTimeoutMilliseconds == 50)
        #expect(configuration.sessionLifetimeSeconds == 14_400)
        #expect(configuration.sessionCookie == "tokengate_session")
        #expect(configuration.sessionParam == "tgs")
        #expect(configuration.verdictCacheSize == 10_000)
        #expect(configuration.leewayMilliseconds == 30_000)
    }

    @Test func badValuesAreRefused() {
        let base = ["--key", key, "--requestor", "TNT", "--resource", "TNT"]
        #expect(refusal(base + ["--listen", "8089"]) != nil)
        #expect(refusal(base + ["--listen", "127.0.0.1:99999"]) != nil)
        #expect(refusal(base + ["--device-header", "X Bad"]) != nil)
        #expect(refusal(base + ["--token-param", "a=b"]) != nil)
        #expect(refusal(base + ["--replay", "memcached://x"]) != nil)
        #expect(refusal(base + ["--replay-timeout", "0"]) != nil)
        #expect(refusal(base + ["--leeway", "-1"]) != nil)
        #expect(refusal(base + ["--verdict-cache-size", "-1"]) != nil)
        for ratio in ["-0.1", "1.01", "nan", "inf"] {
            let why = refusal(base + ["--trace-sample-ratio", ratio])
            #expect(why?.contains("trace-sample-ratio") == true, "\(ratio): \(why ?? "accepted")")
        }
        #expect(refusal(base + ["--trace-sample-ratio", "0.25"]) == nil)
        #expect(refusal(base + ["--listen", "[::1]:9000"]) == nil)
    }

    @Test func aRedisURLBuildsTheSharedStoreWithTheReplayTimeoutAsItsDeadline() throws {
        let configuration = try GateFixtures.configuration(["--replay", "redis://127.0.0.1:6379/0", "--replay-timeout", "75"])
        #expect(configuration.replay == .redis("redis://127.0.0.1:6379/0"))
        let runtime = try GateRuntime(configuration: configuration, logger: LogCapture().logger)
        let store = try #require(runtime.replay.store as? RedisReplayStore)
        #expect(store.client.configuration.operationTimeout == .milliseconds(75))
    }

    /// An inline password can still reach the store from a settings file only the service user reads.
    @Test func aBadRedisURLIsAStartUpErrorThatNeverShowsThePassword() throws {
        let configuration = try GateFixtures.configuration(["--replay", "redis://gate:hunter2@127.0.0.1:99999/0"])
        do {
            _ = try GateRuntime(configuration: configuration, logger: LogCapture().logger)
            Issue.record("a port out of range started the gate")
        } catch {
            #expect(error.message.hasPrefix("--replay: "))
            #expect(!error.message.contains("hunter2"))
        }
    }

    @Test func startUpCheckRefusesLoginAndPermissionErrorsButServesWhenRedisIsDown() {
        func check(_ code: RedisClientError.Code, _ message: String) -> ReplayStartupCheck {
            ReplayStartupCheck.classify(RedisClientError(code, message))
        }
        #expect(check(.authenticationFailed, "refused the login") == .refused("refused the login [authenticationFailed]"))
        #expect(check(.databaseSelectionFailed, "no db") == .refused("no db [databaseSelectionFailed]"))
        #expect(
            check(.unexpectedReply, "refused PING: 'NOPERM this user has no permissions'")
                == .refused("refused PING: 'NOPERM this user has no permissions' [unexpectedReply]")
        )
        #expect(
            check(.errorReply, "PING refused: 'WRONGPASS invalid username-password pair'")
                == .refused("PING refused: 'WRONGPASS invalid username-password pair' [errorReply]")
        )
        #expect(check(.connectionFailed, "refused") == .unreachable("refused [connectionFailed]"))
        #expect(check(.timedOut, "late") == .unreachable("late [timedOut]"))
        #expect(check(.errorReply, "PING refused: 'LOADING'") == .unreachable("PING refused: 'LOADING' [errorReply]"))
        // The write check: a server that does not take SET … PX is a setting to fix; OOM may pass.
        #expect(
            check(.errorReply, "SET refused: 'ERR syntax error'")
                == .refused("SET refused: 'ERR syntax error' [errorReply] (the store writes SET … NX PX: Redis 6.2 or later, or Valkey)")
        )
        #expect(check(.errorReply, "SET refused: 'OOM command not allowed'") == .unreachable("SET refused: 'OOM command not allowed' [errorReply]"))
    }

    @Test func configFileLinesBecomeOptions() throws {
        let text = """
            # a comment
            key = /etc/keys
            requestor = TNT

            mvpd = Comcast_SSO
            mvpd = "Charter Direct"
            allow-any-resource = true
            allow-insecure-keys = false
            """
        let arguments = try ConfigFile.arguments(from: text, source: "gate.conf")
        #expect(
            arguments == [
                "--key", "/etc/keys", "--requestor", "TNT", "--mvpd", "Comcast_SSO", "--mvpd", "Charter Direct",
                "--allow-any-resource",
            ]
        )
    }

    @Test func configFileErrorsNameTheLine() {
        #expect(throws: GateConfigurationError("gate.conf:2: expected `name = value`")) {
            try ConfigFile.arguments(from: "requestor = TNT\njust words", source: "gate.conf")
        }
        #expect(throws: GateConfigurationError.self) { try ConfigFile.arguments(from: "--key = x", source: "c") }
        #expect(throws: GateConfigurationError.self) { try ConfigFile.arguments(from: "allow-any-resource = yes", source: "c") }
        #expect(throws: GateConfigurationError.self) { try ConfigFile.arguments(from: "config = other.conf", source: "c") }
    }

    @Test func theCommandLineComesAfterTheFile() throws {
        let file = "requestor = FROMFILE\nmvpd = A\nkey = \(key)\nresource = TNT\n"
        let expanded = try ConfigFile.expand(
            ["serve", "--config", "gate.conf", "--requestor", "CLI", "--mvpd", "B"],
            read: { _ in file }
        )
        let options = try ServeOptions.parse(Array(expanded.dropFirst()))
        #expect(options.requestor == "CLI")
        #expect(options.mvpds == ["A", "B"])
        #expect(options.keys == [key])
        let fileOnly = try ServeOptions.parse(Array(try ConfigFile.expand(["serve", "--config=x"], read: { _ in file }).dropFirst()))
        #expect(fileOnly.requestor == "FROMFILE")
    }

    @Test func aConfigFileMustBeARegularFile() {
        #expect(throws: (any Error).self) { try ConfigFile.readFile("/dev/zero") }
        #expect(throws: (any Error).self) { try ConfigFile.readFile("/nonexistent/gate.conf") }
    }

    @Test func helpNamesEveryOptionOfTheSpec() {
        let help = Serve.helpMessage(columns: 200)
        for option in [
            "--key", "--requestor", "--mvpd", "--resource", "--resource-header", "--listen", "--token-param",
            "--token-header", "--token-cookie", "--device-header", "--leeway", "--allow-insecure-keys", "--replay",
            "--replay-failure", "--replay-timeout", "--session-secret", "--session-lifetime", "--session-cookie",
            "--session-param", "--verdict-cache-size", "--log-format", "--config", "--allow-any-requestor",
            "--allow-any-resource",
        ] {
            #expect(help.contains(option), "help lacks \(option)")
        }
        #expect(help.contains("127.0.0.1:8089"))
        #expect(help.contains("X-Token-Resource"))
        #expect(TokenGateCommand.helpMessage().contains("auth_request"))
    }

    // MARK: Secrets never in an argument or a readable file (docs/DESIGN.md#secrets)

    func expansionRefusal(_ arguments: [String], file: String = "", permissions: Int? = 0o600) -> String? {
        do {
            _ = try ConfigFile.expand(arguments, read: { _ in file }, permissions: { _ in permissions })
            return nil
        } catch let error as GateConfigurationError {
            return error.message
        } catch {
            return "\(error)"
        }
    }

    @Test func aPasswordInAnArgumentIsRefusedNamingTheFileFormAndNeverPrintingIt() throws {
        for (arguments, fix) in [
            (["serve", "--replay", "redis://gate:hunter2@127.0.0.1:6379/0"], "password-file="),
            (["serve", "--replay", "redis://hunter2@127.0.0.1:6379"], "password-file="),
            (["serve", "--replay=redis-sentinel://127.0.0.1:26379?sentinel-password=hunter2#mymaster"], "sentinel-password-file="),
            (["serve", "--requestor", "TNT", "--replay", "rediss-cluster://:hunter2@a:7000,b:7001"], "password-file="),
        ] {
            let message = try #require(expansionRefusal(arguments), "\(arguments) was not refused")
            #expect(message.contains("command line") && message.contains(fix) && message.contains("$CREDENTIALS_DIRECTORY"), "\(message)")
            #expect(!message.contains("hunter2"), "\(message)")
        }
        let both = try #require(expansionRefusal(["serve", "--replay", "redis-sentinel://:hunter2@h?sentinel-password=hunter3#m"]))
        #expect(both.contains("password-file=PATH and sentinel-password-file=PATH"), "\(both)")
        #expect(!both.contains("hunter2") && !both.contains("hunter3"))
        // The file forms, no password, other stores, and a `--replay` after `--` pass.
        for arguments in [
            ["serve", "--replay", "redis://gate@127.0.0.1:6379/0?password-file=redis.password"],
            ["serve", "--replay", "redis-sentinel://h:26379?sentinel-password-file=/run/s#m"],
            ["serve", "--replay", "redis://127.0.0.1:6379"], ["serve", "--replay", "memory"],
            ["serve", "--", "--replay", "redis://:hunter2@h"],
        ] {
            #expect(expansionRefusal(arguments) == nil, "\(arguments)")
        }
    }

    @Test func aPasswordInASettingsFileOthersCanReadIsRefused() throws {
        let file = "requestor = TNT\nreplay = redis://gate:hunter2@127.0.0.1:6379/0\n"
        for mode in [0o644, 0o640, 0o604, 0o660, 0o601] {
            let message = try #require(expansionRefusal(["serve", "--config", "gate.conf"], file: file, permissions: mode), "mode \(mode)")
            #expect(
                message.contains("gate.conf") && message.contains("readable by others") && message.contains("chmod 600")
                    && message.contains("password-file="),
                "\(message)"
            )
            #expect(!message.contains("hunter2"))
        }
        #expect(expansionRefusal(["serve", "--config", "gate.conf"], file: file, permissions: 0o600) == nil)
        #expect(expansionRefusal(["serve", "--config", "gate.conf"], file: file, permissions: 0o400) == nil)
        let unknown = try #require(expansionRefusal(["serve", "--config", "gate.conf"], file: file, permissions: nil))
        #expect(unknown.contains("cannot be checked") && !unknown.contains("hunter2"))
        // Without a secret the file may be world-readable (the shipped one is 0644).
        let plain = "requestor = TNT\nreplay = redis://gate@127.0.0.1:6379/0?password-file=redis.password\n"
        #expect(expansionRefusal(["serve", "--config", "gate.conf"], file: plain, permissions: 0o644) == nil)
    }

    @Test func theSettingsFileModeIsReadFromTheFile() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("gate-\(UUID().uuidString).conf").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try "requestor = TNT\nreplay = redis-sentinel://h:26379?sentinel-password=hunter2#m\n".write(toFile: path, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
        #expect(throws: GateConfigurationError.self) { try ConfigFile.expand(["serve", "--config", path]) }
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        let expanded = try ConfigFile.expand(["serve", "--config", path])
        #expect(expanded.contains("--replay"))
    }

    @Test func aUserAloneBesidePasswordFileIsTheUser() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("creds-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try "from-the-file\n".write(toFile: directory + "/redis.password", atomically: true, encoding: .utf8)
        // The shipped config's commented example.
        let configuration = try RedisClientConfiguration(
            url: "rediss://gate@redis.internal:6380/0?password-file=redis.password",
            credentialsDirectory: directory
        )
        #expect(configuration.endpoint.username == "gate")
        #expect(configuration.endpoint.password == "from-the-file")
    }
}
