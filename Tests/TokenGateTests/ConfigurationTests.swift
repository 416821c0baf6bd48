import ArgumentParser
import Foundation
import EntitlementTokensRedis
import Testing
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

    @Test func refusesToStartWithoutKeys() {
        #expect(refusal(["--requestor", "TNT", "--resource", "TNT"])?.contains("--key") == true)
    }

    @Test func refusesContradictions() {
        #expect(refusal(["--key", key, "--requestor", "TNT", "--allow-any-requestor", "--resource", "T"]) != nil)
        #expect(refusal(["--key", key, "--requestor", "TNT", "--resource", "T", "--resource-header", "X-R"]) != nil)
        #expect(refusal(["--key", key, "--requestor", "TNT", "--resource", "T", "--allow-any-resource"]) != nil)
    }

    /// SPEC §10: the URL names the mode; the durability is a setting of its own.
    @Test func theReplayURLNamesTheRedisMode() throws {
        for url in ["redis://127.0.0.1:6379", "rediss://h:6380/0", "redis-sentinel://a:26379,b:26379#mymaster",
                    "rediss-sentinel://a:26379/1#mymaster", "redis-cluster://a:7000,b:7001", "rediss-cluster://a:7000"] {
            let configuration = try GateFixtures.configuration(["--replay", url])
            #expect(configuration.replay == .redis(url))
            #expect(configuration.replayDurability == .primary)
        }
        #expect(try GateFixtures.configuration(["--replay-durability", "replicated"]).replayDurability == .replicated)
        #expect(throws: (any Error).self) { try GateFixtures.configuration(["--replay-durability", "quorum"]) }
        #expect(throws: GateConfigurationError.self) { try GateFixtures.configuration(["--replay", "redis-shards://a:1"]) }
        // The store a sentinel URL makes, and the durability it is given, reach the library.
        let made = try ReplayStoreFactory.make(.redis("redis-sentinel://127.0.0.1:1#mymaster"), timeout: .milliseconds(50),
                                               durability: .replicated)
        #expect(made.store != nil)
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
        #expect(refusal(base + ["--listen", "[::1]:9000"]) == nil)
    }

    @Test func aRedisURLBuildsTheSharedStoreWithTheReplayTimeoutAsItsDeadline() throws {
        let configuration = try GateFixtures.configuration(["--replay", "redis://127.0.0.1:6379/0", "--replay-timeout", "75"])
        #expect(configuration.replay == .redis("redis://127.0.0.1:6379/0"))
        let runtime = try GateRuntime(configuration: configuration, logger: LogCapture().logger)
        let store = try #require(runtime.replay.store as? RedisReplayStore)
        #expect(store.client.configuration.operationTimeout == .milliseconds(75))
        #expect(runtime.replay.keepsDeadline)
    }

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
        #expect(check(.unexpectedReply, "refused PING: 'NOPERM this user has no permissions'")
                    == .refused("refused PING: 'NOPERM this user has no permissions' [unexpectedReply]"))
        #expect(check(.errorReply, "PING refused: 'WRONGPASS invalid username-password pair'")
                    == .refused("PING refused: 'WRONGPASS invalid username-password pair' [errorReply]"))
        #expect(check(.connectionFailed, "refused") == .unreachable("refused [connectionFailed]"))
        #expect(check(.timedOut, "late") == .unreachable("late [timedOut]"))
        #expect(check(.errorReply, "PING refused: 'LOADING'") == .unreachable("PING refused: 'LOADING' [errorReply]"))
        // The write check: a server without SET … PXAT (Redis < 6.2) is a setting to fix; OOM may pass.
        #expect(check(.errorReply, "SET refused: 'ERR syntax error'")
                    == .refused("SET refused: 'ERR syntax error' [errorReply] (SET … PXAT needs Redis 6.2 or later, or Valkey)"))
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
        #expect(arguments == ["--key", "/etc/keys", "--requestor", "TNT", "--mvpd", "Comcast_SSO", "--mvpd", "Charter Direct",
                              "--allow-any-resource"])
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
        let expanded = try ConfigFile.expand(["serve", "--config", "gate.conf", "--requestor", "CLI", "--mvpd", "B"],
                                             read: { _ in file })
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
        for option in ["--key", "--requestor", "--mvpd", "--resource", "--resource-header", "--listen", "--token-param",
                       "--token-header", "--token-cookie", "--device-header", "--leeway", "--allow-insecure-keys", "--replay",
                       "--replay-failure", "--replay-timeout", "--session-secret", "--session-lifetime", "--session-cookie",
                       "--session-param", "--verdict-cache-size", "--log-format", "--config", "--allow-any-requestor",
                       "--allow-any-resource"] {
            #expect(help.contains(option), "help lacks \(option)")
        }
        #expect(help.contains("127.0.0.1:8089"))
        #expect(help.contains("X-Token-Resource"))
        #expect(TokenGateCommand.helpMessage().contains("auth_request"))
    }
}
