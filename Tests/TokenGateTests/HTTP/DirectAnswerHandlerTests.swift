import EntitlementTokens
import HTTPTypes
import NIOCore
import NIOEmbedded
import NIOHTTPTypes
import Synchronization
import Testing

@testable import TokenGate

/// ``DirectAnswerHandler`` on an embedded channel: what it answers itself,
/// what it hands on, and that HTTP/1.1's order of answers holds either way
/// (docs/DESIGN.md#answers-written-from-the-event-loop).
@Suite struct DirectAnswerHandlerTests {
    /// A request the stand-in responder answers at once, or after a verification
    /// that ends at once or waits until the test lets it go (its path says which);
    /// any other is handed on.
    static func request(_ path: String, _ fields: HTTPFields = [:]) -> HTTPRequest {
        HTTPRequest(method: .get, scheme: nil, authority: "gate", path: path, headerFields: fields)
    }

    final class Channel {
        let channel = EmbeddedChannel()
        var asked: [String] = []
        /// Where a verification that waited resumes: run by the test, on its thread.
        let executor = ManualExecutor()
        /// The verifications waiting for the test, by path.
        let waits = Waits()
        /// Reads asked of the channel and closes that reached it.
        let outbound = OutboundEvents()

        init() throws {
            let waits = waits
            let handler = DirectAnswerHandler(
                answer: { [unowned self] head in
                    let path = head.path ?? ""
                    asked.append(path)
                    let response = HTTPResponse(status: .ok, headerFields: [HTTPField.Name("X-Path")!: path])
                    if path.hasPrefix("/at-once") { return .now(response) }
                    if path.hasPrefix("/verified") { return .afterVerifying { response } }
                    if path.hasPrefix("/waits") {
                        return .afterVerifying {
                            await waits.wait(path)
                            return response
                        }
                    }
                    return nil
                },
                executor: { [executor] _ in executor }
            )
            try channel.pipeline.syncOperations.addHandlers([outbound, handler])
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 8089)).wait()
        }

        /// Lets the verification of `path` go on, and runs what resumes.
        func release(_ path: String) {
            waits.release(path)
            executor.runAll()
        }

        /// `parts` arrive in one read.
        func read(_ parts: [HTTPRequestPart]) throws {
            for part in parts { try channel.writeInbound(part) }
            channel.pipeline.fireChannelReadComplete()
        }

        func handedOn() throws -> [HTTPRequestPart] {
            var parts: [HTTPRequestPart] = []
            while let part = try channel.readInbound(as: HTTPRequestPart.self) { parts.append(part) }
            return parts
        }

        func answered() throws -> [HTTPResponsePart] {
            var parts: [HTTPResponsePart] = []
            while let part = try channel.readOutbound(as: HTTPResponsePart.self) { parts.append(part) }
            return parts
        }

        /// The framework's answer to a request handed on, written through the pipeline.
        func frameworkAnswers(_ path: String) throws {
            try channel.writeOutbound(HTTPResponsePart.head(HTTPResponse(status: .accepted, headerFields: [HTTPField.Name("X-Path")!: path])))
            try channel.writeOutbound(HTTPResponsePart.end(nil))
        }
    }

    /// A task executor whose jobs wait until the test runs them, so an
    /// embedded channel is only ever touched from the test's thread.
    final class ManualExecutor: TaskExecutor {
        private let jobs = Mutex<[UnownedJob]>([])

        func enqueue(_ job: consuming ExecutorJob) {
            let job = UnownedJob(job)
            jobs.withLock { $0.append(job) }
        }

        func runAll() {
            while let job = jobs.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) {
                job.runSynchronously(on: asUnownedTaskExecutor())
            }
        }
    }

    /// Verifications held until the test releases them.
    final class Waits: Sendable {
        private let held = Mutex<[String: CheckedContinuation<Void, Never>]>([:])

        func wait(_ path: String) async {
            await withCheckedContinuation { continuation in held.withLock { $0[path] = continuation } }
        }

        func release(_ path: String) {
            held.withLock { $0.removeValue(forKey: path) }?.resume()
        }
    }

    /// Counts the reads and closes that pass on towards the socket.
    final class OutboundEvents: ChannelOutboundHandler, @unchecked Sendable {
        typealias OutboundIn = Any
        var reads = 0
        var closes = 0

        func read(context: ChannelHandlerContext) {
            reads += 1
            context.read()
        }

        func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
            closes += 1
            context.close(mode: mode, promise: promise)
        }
    }

    static func paths(_ parts: [HTTPResponsePart]) -> [String] {
        parts.compactMap { if case .head(let head) = $0 { head.headerFields[HTTPField.Name("X-Path")!] } else { nil } }
    }

    @Test func aRequestDecidedAtOnceIsAnsweredHereAndNeverHandedOn() throws {
        let connection = try Channel()
        try connection.read([.head(Self.request("/at-once/1")), .end(nil)])
        #expect(try connection.handedOn().isEmpty)
        let answer = try connection.answered()
        #expect(answer.count == 2)
        guard case .head(let head) = answer.first, case .end = answer.last else {
            Issue.record("\(answer)")
            return
        }
        #expect(head.status == .ok)
        #expect(head.headerFields[.contentLength] == "0")
        #expect(connection.channel.isActive)
    }

    @Test func aRequestThatMustWaitIsHandedOnWhole() throws {
        let connection = try Channel()
        try connection.read([.head(Self.request("/verify")), .end(nil)])
        let parts = try connection.handedOn()
        #expect(parts.count == 2)
        guard case .head(let head) = parts.first, case .end = parts.last else {
            Issue.record("\(parts)")
            return
        }
        #expect(head.path == "/verify")
        #expect(try connection.answered().isEmpty)
    }

    /// Pipelined: while the framework owes an answer, what follows is handed
    /// on too, though it could be answered at once; once that answer has
    /// ended, the next is answered here again.
    @Test func answersKeepTheOrderOfTheRequests() throws {
        let connection = try Channel()
        try connection.read([.head(Self.request("/verify")), .end(nil), .head(Self.request("/at-once/2")), .end(nil)])
        #expect(try connection.handedOn().count == 4, "the second request waits its turn behind the first")
        #expect(try connection.answered().isEmpty)
        try connection.frameworkAnswers("/verify")
        try connection.frameworkAnswers("/at-once/2")
        #expect(Self.paths(try connection.answered()) == ["/verify", "/at-once/2"])
        try connection.read([.head(Self.request("/at-once/3")), .end(nil)])
        #expect(try connection.handedOn().isEmpty)
        #expect(Self.paths(try connection.answered()) == ["/at-once/3"])
    }

    @Test func pipelinedAnswersAtOnceGoOutInOrderOnOneFlush() throws {
        let connection = try Channel()
        try connection.read([.head(Self.request("/at-once/a")), .end(nil), .head(Self.request("/at-once/b")), .end(nil)])
        #expect(Self.paths(try connection.answered()) == ["/at-once/a", "/at-once/b"])
        #expect(connection.asked == ["/at-once/a", "/at-once/b"])
    }

    /// A body (announced or not) means the framework's reading: the request
    /// is handed on with its body, and the responder is not asked.
    @Test(arguments: [true, false])
    func aRequestWithABodyIsHandedOn(announced: Bool) throws {
        let connection = try Channel()
        let fields: HTTPFields = announced ? [.contentLength: "4"] : [:]
        try connection.read([.head(Self.request("/at-once/body", fields)), .body(ByteBuffer(string: "body")), .end(nil)])
        let parts = try connection.handedOn()
        #expect(parts.count == 3, "\(parts)")
        guard case .head = parts.first, case .body(let body) = parts.dropFirst().first, case .end = parts.last else {
            Issue.record("\(parts)")
            return
        }
        #expect(String(buffer: body) == "body")
        #expect(try connection.answered().isEmpty)
        #expect(connection.asked.isEmpty, "a request with a body never reaches the responder here")
    }

    /// A peer that reads no answers: past the watermark, requests go to the
    /// framework, whose writer waits; nothing more is queued here.
    @Test func aConnectionThatIsNotWritableHandsOn() throws {
        let connection = try Channel()
        connection.channel.isWritable = false
        try connection.read([.head(Self.request("/at-once/unread")), .end(nil)])
        #expect(try connection.handedOn().count == 2)
        #expect(try connection.answered().isEmpty)
        #expect(connection.asked.isEmpty)
    }

    @Test func connectionCloseClosesAfterTheAnswerAndReadsNothingMore() throws {
        let connection = try Channel()
        try connection.read([
            .head(Self.request("/at-once/last", [.connection: "close"])), .end(nil),
            .head(Self.request("/at-once/after")), .end(nil),
        ])
        #expect(Self.paths(try connection.answered()) == ["/at-once/last"])
        #expect(try connection.handedOn().isEmpty)
        #expect(connection.asked == ["/at-once/last"])
        #expect(!connection.channel.isActive, "closed once the answer was written")
    }

    /// RFC 9110's IMF-fixdate, against Python's `strftime("%a, %d %b %Y %H:%M:%S GMT")` in UTC.
    @Test(arguments: [
        (Int64(0), "Thu, 01 Jan 1970 00:00:00 GMT"), (951_782_400, "Tue, 29 Feb 2000 00:00:00 GMT"),
        (1_795_833_000, "Sat, 28 Nov 2026 02:30:00 GMT"), (4_102_444_799, "Thu, 31 Dec 2099 23:59:59 GMT"),
    ])
    func theDateOfAnAnswer(second: Int64, text: String) throws {
        #expect(HTTPDate.format(second: second) == text)
        let dates = HTTPDate()
        #expect(dates.text(at: try #require(TokenTimestamp(millisecondsSince1970: second * 1000 + 999))) == text)
    }

    @Test func aFrameworkAnswerToNothingHandedOnChangesNoOrder() throws {
        // The framework's 400 for a head it could not parse answers no request handed on.
        let connection = try Channel()
        try connection.frameworkAnswers("/unparsed")
        _ = try connection.answered()
        try connection.read([.head(Self.request("/at-once/next")), .end(nil)])
        #expect(Self.paths(try connection.answered()) == ["/at-once/next"])
    }

    @Test func aVerificationThatEndsAtOnceIsAnsweredInTheSameRead() throws {
        let connection = try Channel()
        try connection.read([.head(Self.request("/verified/1")), .end(nil), .head(Self.request("/at-once/2")), .end(nil)])
        #expect(try connection.handedOn().isEmpty)
        #expect(Self.paths(try connection.answered()) == ["/verified/1", "/at-once/2"])
    }

    /// A verification that waits for the store: what the same read brought
    /// waits behind it, neither answered nor handed on, and no read is asked
    /// for; once it ends, its answer goes first and the rest follow in order.
    @Test func whatFollowsAVerificationThatWaitsWaitsBehindIt() throws {
        let connection = try Channel()
        let readsBefore = connection.outbound.reads
        try connection.read([
            .head(Self.request("/waits/1")), .end(nil), .head(Self.request("/at-once/2")), .end(nil),
            .head(Self.request("/verify/3")), .end(nil), .head(Self.request("/at-once/4")), .end(nil),
        ])
        connection.channel.read()
        #expect(try connection.answered().isEmpty)
        #expect(try connection.handedOn().isEmpty)
        #expect(connection.asked == ["/waits/1"])
        #expect(connection.outbound.reads == readsBefore, "no read while an answer waits")
        connection.release("/waits/1")
        #expect(Self.paths(try connection.answered()) == ["/waits/1", "/at-once/2"])
        let handedOn = try connection.handedOn()
        #expect(handedOn.count == 4, "the request that must go to the framework, and the one behind it: \(handedOn)")
        #expect(connection.outbound.reads == readsBefore + 1, "the read withheld is asked for once the answer is written")
        try connection.frameworkAnswers("/verify/3")
        try connection.frameworkAnswers("/at-once/4")
        #expect(Self.paths(try connection.answered()) == ["/verify/3", "/at-once/4"])
    }

    /// Two verifications that wait, one behind the other: each answer in turn.
    @Test func verificationsThatWaitAreAnsweredInTurn() throws {
        let connection = try Channel()
        try connection.read([.head(Self.request("/waits/a")), .end(nil), .head(Self.request("/waits/b")), .end(nil)])
        #expect(connection.asked == ["/waits/a"])
        connection.release("/waits/b")  // not asked yet: nothing to release
        connection.release("/waits/a")
        #expect(Self.paths(try connection.answered()) == ["/waits/a"])
        #expect(connection.asked == ["/waits/a", "/waits/b"])
        connection.release("/waits/b")
        #expect(Self.paths(try connection.answered()) == ["/waits/b"])
    }

    /// The server's idle timeout or a shutdown asks for a close while an
    /// answer waits: it comes after the answer is written.
    @Test func aCloseWaitsForTheAnswer() throws {
        let connection = try Channel()
        try connection.read([.head(Self.request("/waits/1")), .end(nil)])
        let closed = connection.channel.eventLoop.makePromise(of: Void.self)
        connection.channel.pipeline.close(promise: closed)
        #expect(connection.channel.isActive)
        #expect(connection.outbound.closes == 0)
        connection.release("/waits/1")
        #expect(Self.paths(try connection.answered()) == ["/waits/1"])
        #expect(connection.outbound.closes == 1)
        #expect(!connection.channel.isActive)
    }

    @Test func connectionCloseAfterAVerificationThatWaitedClosesAndReadsNothingMore() throws {
        let connection = try Channel()
        try connection.read([
            .head(Self.request("/waits/last", [.connection: "close"])), .end(nil),
            .head(Self.request("/at-once/after")), .end(nil),
        ])
        connection.release("/waits/last")
        #expect(Self.paths(try connection.answered()) == ["/waits/last"])
        #expect(try connection.handedOn().isEmpty)
        #expect(!connection.channel.isActive)
    }
}
