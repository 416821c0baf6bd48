import EntitlementTokens
import HTTPTypes
import NIOCore
import NIOEmbedded
import NIOHTTPTypes
import Synchronization
import Testing

@testable import TokenGate

/// ``DirectAnswerHandler`` on an embedded channel: every request of its
/// routes answered here and never handed on (with a body, behind the
/// framework's answers, on a connection that is not writable), every other
/// handed on, and HTTP/1.1's order of answers either way
/// (docs/DESIGN.md#answers-written-from-the-event-loop).
@Suite struct DirectAnswerHandlerTests {
    /// A request the stand-in responder answers here, at once or after a wait
    /// until the test lets it go (its path says which); any other is handed on.
    static func request(_ path: String, _ fields: HTTPFields = [:], method: HTTPRequest.Method = .get) -> HTTPRequest {
        HTTPRequest(method: method, scheme: nil, authority: "gate", path: path, headerFields: fields)
    }

    final class Channel {
        let channel = EmbeddedChannel()
        /// The answers made, by path, in order.
        let made = Made()
        var asked: [String] { made.all }
        /// Where a verification that waited resumes: run by the test, on its thread.
        let executor = ManualExecutor()
        /// The verifications waiting for the test, by path.
        let waits = Waits()
        /// Reads asked of the channel and closes that reached it.
        let outbound = OutboundEvents()

        init() throws {
            let waits = waits
            let made = made
            let handler = DirectAnswerHandler(
                answer: { head in
                    let path = head.path ?? ""
                    let response = HTTPResponse(status: .ok, headerFields: [HTTPField.Name("X-Path")!: path])
                    // A body the route's answer carries: what a manifest's answer is.
                    let body = path.hasPrefix("/at-once/body-answer") ? ByteBuffer(string: "#EXTM3U\n") : ByteBuffer()
                    if path.hasPrefix("/at-once") {
                        return .init(bodyLimit: nil) { _ in
                            made.append(path)
                            return GateAnswer(response, body: body)
                        }
                    }
                    if path.hasPrefix("/waits") {
                        return .init(bodyLimit: nil) { _ in
                            made.append(path)
                            await waits.wait(path)
                            return GateAnswer(response)
                        }
                    }
                    // A playback route's small body: gathered up to 8 bytes, told back in `X-Body`.
                    if path.hasPrefix("/reads-body") {
                        return .init(bodyLimit: 8) { body in
                            made.append(path)
                            var answer = GateAnswer(response)
                            switch body {
                            case .whole(let bytes): answer.head.headerFields[HTTPField.Name("X-Body")!] = "whole:" + String(buffer: bytes)
                            case .overLimit: answer.head.headerFields[HTTPField.Name("X-Body")!] = "over"
                            case .dropped: answer.head.headerFields[HTTPField.Name("X-Body")!] = "dropped"
                            }
                            return answer
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
            turn()
        }

        /// `parts` arrive in one read, and the loop's turn goes on to its end.
        func read(_ parts: [HTTPRequestPart]) throws {
            try readOnly(parts)
            turn()
        }

        /// `parts` arrive in one read; what the loop runs after its reads has not run yet.
        func readOnly(_ parts: [HTTPRequestPart]) throws {
            for part in parts { try channel.writeInbound(part) }
            channel.pipeline.fireChannelReadComplete()
        }

        /// The rest of the loop's turn: what it runs after its reads, the answers' jobs among it.
        func turn() {
            repeat { channel.embeddedEventLoop.run() } while executor.runAll()
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

        /// Runs every job, those the jobs enqueue included; whether there was one.
        @discardableResult
        func runAll() -> Bool {
            var ran = false
            while let job = jobs.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) {
                job.runSynchronously(on: asUnownedTaskExecutor())
                ran = true
            }
            return ran
        }
    }

    /// The paths whose answers were made, in order.
    final class Made: Sendable {
        private let list = Mutex<[String]>([])
        func append(_ path: String) { list.withLock { $0.append(path) } }
        var all: [String] { list.withLock { $0 } }
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

    @Test func anAnswerMadeAtOnceIsWrittenInTheLoopsTurnAndNeverHandedOn() throws {
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

    /// The answer is made after the reads of the loop's turn, not inside the
    /// read: every readable connection is read first, then the answers are
    /// made back to back. The read asked for at the end of the read that
    /// started the answer goes through (the socket stays watched); another,
    /// while the answer is made, is withheld until it is written.
    @Test func anAnswerIsMadeAfterTheReadsOfTheLoopsTurn() throws {
        let connection = try Channel()
        let readsBefore = connection.outbound.reads
        try connection.readOnly([.head(Self.request("/at-once/1")), .end(nil)])
        #expect(connection.asked.isEmpty, "not made inside the read")
        #expect(try connection.answered().isEmpty)
        connection.channel.read()
        #expect(connection.outbound.reads == readsBefore + 1, "the read that ends the one that started the answer goes through")
        connection.channel.read()
        #expect(connection.outbound.reads == readsBefore + 1, "a second one waits for the answer")
        connection.turn()
        #expect(connection.asked == ["/at-once/1"])
        #expect(Self.paths(try connection.answered()) == ["/at-once/1"])
        #expect(connection.outbound.reads == readsBefore + 2, "the read withheld is asked for once the answer is written")
    }

    @Test func aRequestOfAnotherRouteIsHandedOnWhole() throws {
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

    /// Pipelined: a request of these routes behind one the framework owes an
    /// answer to waits for that answer's end, neither answered nor handed on,
    /// and nothing more is read meanwhile; then it is answered here.
    @Test func answersKeepTheOrderOfTheRequests() throws {
        let connection = try Channel()
        let readsBefore = connection.outbound.reads
        try connection.read([.head(Self.request("/verify")), .end(nil), .head(Self.request("/at-once/2")), .end(nil)])
        #expect(try connection.handedOn().count == 2, "only the framework's request is handed on")
        #expect(try connection.answered().isEmpty)
        #expect(connection.asked.isEmpty, "its answer is not made before its turn")
        connection.channel.read()
        #expect(connection.outbound.reads == readsBefore, "no read while an answer waits for its turn")
        try connection.frameworkAnswers("/verify")
        connection.turn()
        #expect(Self.paths(try connection.answered()) == ["/verify", "/at-once/2"])
        #expect(connection.outbound.reads == readsBefore + 1, "the read withheld is asked for once the answer is written")
        try connection.read([.head(Self.request("/at-once/3")), .end(nil)])
        #expect(try connection.handedOn().isEmpty)
        #expect(Self.paths(try connection.answered()) == ["/at-once/3"])
    }

    @Test func pipelinedAnswersAtOnceGoOutInOrder() throws {
        let connection = try Channel()
        try connection.read([.head(Self.request("/at-once/a")), .end(nil), .head(Self.request("/at-once/b")), .end(nil)])
        #expect(Self.paths(try connection.answered()) == ["/at-once/a", "/at-once/b"])
        #expect(connection.asked == ["/at-once/a", "/at-once/b"])
    }

    /// A body (announced or not) is read and dropped: these routes judge the
    /// head, and the request is answered here, never handed on.
    @Test(arguments: [true, false])
    func aRequestWithABodyIsAnsweredHere(announced: Bool) throws {
        let connection = try Channel()
        let fields: HTTPFields = announced ? [.contentLength: "8"] : [:]
        try connection.read([
            .head(Self.request("/at-once/body", fields, method: .post)), .body(ByteBuffer(string: "body")), .body(ByteBuffer(string: "more")),
            .end(nil),
        ])
        #expect(try connection.handedOn().isEmpty, "nothing of it reaches the framework")
        #expect(Self.paths(try connection.answered()) == ["/at-once/body"])
        #expect(connection.asked == ["/at-once/body"])
        try connection.read([.head(Self.request("/verify")), .end(nil)])
        #expect(try connection.handedOn().count == 2, "the next request is read as usual")
    }

    /// A route that reads its body (the playback routes' JSON) gets it whole
    /// up to its bound, in as many parts as it came; past the bound, by its
    /// `Content-Length` or as it arrived, it is told so and nothing of it is
    /// kept; a route that judges the head gets none. Never handed on.
    @Test(arguments: [
        ([] as [String], nil as Int?, "whole:"),
        (["{\"a\":", "1}"], nil, "whole:{\"a\":1}"),
        (["12345678"], 8, "whole:12345678"),
        (["12345", "6789"], nil, "over"),
        (["123456789"], 9, "over"),
        ([], 9, "over"),  // declared past the bound: refused before a byte arrives
    ])
    func aBodyIsGatheredUpToTheRoutesBound(parts: [String], declared: Int?, told: String) throws {
        let connection = try Channel()
        let fields: HTTPFields = declared.map { [.contentLength: String($0)] } ?? [:]
        try connection.read(
            [.head(Self.request("/reads-body", fields, method: .post))] + parts.map { .body(ByteBuffer(string: $0)) } + [.end(nil)]
        )
        #expect(try connection.handedOn().isEmpty)
        let answer = try connection.answered()
        guard case .head(let head) = answer.first else {
            Issue.record("\(answer)")
            return
        }
        #expect(head.headerFields[HTTPField.Name("X-Body")!] == told)
        // The next request's body starts afresh.
        try connection.read([.head(Self.request("/reads-body", method: .post)), .body(ByteBuffer(string: "ok")), .end(nil)])
        guard case .head(let next) = try connection.answered().first else {
            Issue.record("no answer to the next request")
            return
        }
        #expect(next.headerFields[HTTPField.Name("X-Body")!] == "whole:ok")
    }

    /// An answer with a body (a manifest's): its length, then the body; to a
    /// HEAD, the same length and no body.
    @Test func anAnswerWithABodyAndTheSameToAHead() throws {
        let connection = try Channel()
        try connection.read([.head(Self.request("/at-once/body-answer")), .end(nil)])
        let answer = try connection.answered()
        #expect(answer.count == 3, "\(answer)")
        guard case .head(let head) = answer.first, case .body(let body) = answer.dropFirst().first, case .end = answer.last else {
            Issue.record("\(answer)")
            return
        }
        #expect(head.headerFields[.contentLength] == "8")
        #expect(String(buffer: body) == "#EXTM3U\n")
        try connection.read([.head(Self.request("/at-once/body-answer", method: .head)), .end(nil)])
        let toHead = try connection.answered()
        #expect(toHead.count == 2, "no body to a HEAD: \(toHead)")
        guard case .head(let headOnly) = toHead.first else { return }
        #expect(headOnly.headerFields[.contentLength] == "8")
    }

    /// A peer that reads no answers: the request waits here, unanswered and
    /// not handed on, and nothing more is read until the connection is writable again.
    @Test func aConnectionThatIsNotWritableWaits() throws {
        let connection = try Channel()
        connection.channel.isWritable = false
        let readsBefore = connection.outbound.reads
        try connection.read([.head(Self.request("/at-once/unread")), .end(nil), .head(Self.request("/verify")), .end(nil)])
        connection.channel.read()
        #expect(try connection.handedOn().isEmpty)
        #expect(try connection.answered().isEmpty)
        #expect(connection.asked.isEmpty)
        #expect(connection.outbound.reads == readsBefore)
        connection.channel.isWritable = true
        connection.channel.pipeline.fireChannelWritabilityChanged()
        connection.turn()
        #expect(Self.paths(try connection.answered()) == ["/at-once/unread"])
        #expect(try connection.handedOn().count == 2, "what waited behind it goes on in order")
        #expect(connection.outbound.reads == readsBefore + 1)
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

    /// An answer that waits (for the store): what the same read brought waits
    /// behind it, neither answered nor handed on, and no read is asked for
    /// past the one that ended the read that started it; once it ends, its
    /// answer goes first and the rest follow in order.
    @Test func whatFollowsAVerificationThatWaitsWaitsBehindIt() throws {
        let connection = try Channel()
        let readsBefore = connection.outbound.reads
        try connection.read([
            .head(Self.request("/waits/1")), .end(nil), .head(Self.request("/at-once/2")), .end(nil),
            .head(Self.request("/verify/3")), .end(nil), .head(Self.request("/at-once/4")), .end(nil),
        ])
        connection.channel.read()
        #expect(connection.outbound.reads == readsBefore + 1, "the read that ended the one that started the answer")
        connection.channel.read()
        #expect(try connection.answered().isEmpty)
        #expect(try connection.handedOn().isEmpty)
        #expect(connection.asked == ["/waits/1"])
        #expect(connection.outbound.reads == readsBefore + 1, "no other read while an answer waits")
        connection.release("/waits/1")
        #expect(Self.paths(try connection.answered()) == ["/waits/1", "/at-once/2"])
        let handedOn = try connection.handedOn()
        #expect(handedOn.count == 2, "the framework's request; the one behind it waits for that answer: \(handedOn)")
        #expect(connection.outbound.reads == readsBefore + 1, "still no read: an answer waits for its turn")
        try connection.frameworkAnswers("/verify/3")
        connection.turn()
        #expect(Self.paths(try connection.answered()) == ["/verify/3", "/at-once/4"])
        #expect(connection.outbound.reads == readsBefore + 2, "the read withheld is asked for once the last answer is written")
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

    /// What waits is bounded by the reads that brought it: an answer started
    /// from what waited lets no read through, where each such answer would
    /// otherwise add a read's worth behind it.
    @Test func anAnswerStartedFromWhatWaitedLetsNoReadThrough() throws {
        let connection = try Channel()
        let readsBefore = connection.outbound.reads
        try connection.read([.head(Self.request("/waits/a")), .end(nil), .head(Self.request("/waits/b")), .end(nil)])
        connection.channel.read()
        #expect(connection.outbound.reads == readsBefore + 1)
        connection.release("/waits/a")
        #expect(connection.asked == ["/waits/a", "/waits/b"])
        connection.channel.read()
        #expect(connection.outbound.reads == readsBefore + 1, "withheld while /waits/b, started from what waited, is made")
        connection.release("/waits/b")
        #expect(Self.paths(try connection.answered()) == ["/waits/a", "/waits/b"])
        #expect(connection.outbound.reads == readsBefore + 2)
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
