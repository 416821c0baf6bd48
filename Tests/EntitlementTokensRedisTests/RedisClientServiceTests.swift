import IntegrationSupport
import NIOCore
import NIOPosix
import ServiceLifecycle
import Testing

@testable import EntitlementTokensRedis

@Suite("Redis: error codes are extensible")
struct RedisClientErrorCodeTests {
    @Test func codesAreValuesAndANewerCodeIsKept() {
        #expect(RedisClientError.Code(rawValue: "timedOut") == .timedOut)
        let newer = RedisClientError.Code(rawValue: "someFutureCode")
        #expect(!RedisClientError.Code.allCases.contains(newer))
        let error = RedisClientError(newer, "from a newer client")
        #expect(error.description == "from a newer client [someFutureCode]")
        switch error.code {
        case .timedOut, .cancelled: Issue.record("matched a code it is not")
        default: break
        }
        #expect(Set(RedisClientError.Code.allCases.map(\.rawValue)).count == RedisClientError.Code.allCases.count)
        #expect(RedisClientError.Code.allCases.contains(.cancelled))
    }
}

extension RedisIntegrationTests {
    @Suite("Redis: the client as a Service on an injected event-loop group")
    struct RedisClientServiceTests {
        @Test func runsOnTheInjectedGroupUntilCancelledThenIsShutDown() async throws {
            try await withRedisServer { server in
                let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
                var configuration = try RedisClientConfiguration(url: server.url)
                configuration.operationTimeout = .seconds(2)
                let client = try RedisClient(configuration: configuration, eventLoopGroup: group)
                let running = Task { try await client.run() }
                try await client.ping()
                running.cancel()
                try await running.value
                await #expect(throws: RedisClientError(.shutDown, "")) { try await client.ping() }
                try await group.shutdownGracefully()
            }
        }
    }
}
