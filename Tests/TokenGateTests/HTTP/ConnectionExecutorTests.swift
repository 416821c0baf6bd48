import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTesting
import NIOCore
import NIOPosix
import Testing

@testable import GateTestSupport
@testable import TokenGate

/// Issue 22 item 2: a decision that needs no I/O runs on the event loop that
/// read its request, not on Swift's pool. A real server over a real socket,
/// built with the gate's own ``LimitedHTTP1Channel``; each handler reports
/// whether it runs on one of NIO's event loop threads, at its start and after
/// an await that resumes from elsewhere (a timer, as a Redis reply would).
@Suite struct ConnectionExecutorTests {
    static func application(executor: RequestExecutor) -> some ApplicationProtocol {
        let router = Router()
        router.get("where") { _, _ -> String in
            let atStart = MultiThreadedEventLoopGroup.currentEventLoop != nil
            try await Task.sleep(for: .milliseconds(2))
            let afterAwait = MultiThreadedEventLoopGroup.currentEventLoop != nil
            return "\(atStart ? "loop" : "pool") \(afterAwait ? "loop" : "pool")"
        }
        let metrics = GateMetrics()
        let limiter = ConnectionLimiter(limits: ConnectionLimits(), metrics: metrics)
        return Application(
            router: router,
            server: HTTPServerBuilder { responder in
                LimitedHTTP1Channel(
                    responder: responder,
                    configuration: ServerLimits.http1,
                    requestTimeout: .seconds(5),
                    limiter: limiter,
                    metrics: metrics,
                    executor: executor,
                    readiness: Readiness(replayProbe: { nil }),
                    answerOnTheLoop: { _ in nil }
                )
            },
            configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: 0))
        )
    }

    @Test func theDefaultRunsEachRequestOnItsConnectionsEventLoop() async throws {
        try await Self.application(executor: .eventLoop).test(.live) { client in
            for _ in 0..<3 {
                try await client.execute(uri: "/where", method: .get) { response in
                    #expect(String(buffer: response.body) == "loop loop")
                }
            }
        }
    }

    @Test func thePoolOptOutHopsToSwiftsPool() async throws {
        try await Self.application(executor: .pool).test(.live) { client in
            try await client.execute(uri: "/where", method: .get) { response in
                #expect(String(buffer: response.body) == "pool pool")
            }
        }
    }

    @Test func theExecutorIsChosenByEnvironmentAndAnUnknownNameIsRefused() throws {
        let options = try GateFixtures.options(GateFixtures.baseArguments)
        #expect(try GateConfiguration(options, executor: nil).executor == .eventLoop)
        #expect(try GateConfiguration(options, executor: "event-loop").executor == .eventLoop)
        #expect(try GateConfiguration(options, executor: "pool").executor == .pool)
        #expect(throws: GateConfigurationError.self) { try GateConfiguration(options, executor: "event-loops") }
        let hostile = "x\u{1B}[31m\u{07}"
        #expect(throws: GateConfigurationError("TOKENGATE_EXECUTOR must be event-loop or pool")) {
            try GateConfiguration(options, executor: hostile)
        }
    }
}
