import EntitlementTokens
import HTTPTypes
import NIOCore
import NIOEmbedded
import NIOHTTPTypes
import Testing
@testable import TokenGate

/// ``DirectAnswerHandler`` on an embedded channel: what it answers itself,
/// what it hands on, and that HTTP/1.1's order of answers holds either way
/// (docs/DESIGN.md#answers-written-from-the-event-loop).
@Suite struct DirectAnswerHandlerTests {
    /// A request the stand-in responder answers at once (its path says so); any other is handed on.
    static func request(_ path: String, _ fields: HTTPFields = [:]) -> HTTPRequest {
        HTTPRequest(method: .get, scheme: nil, authority: "gate", path: path, headerFields: fields)
    }

    final class Channel {
        let channel = EmbeddedChannel()
        var asked: [String] = []

        init() throws {
            let handler = DirectAnswerHandler { [unowned self] head in
                asked.append(head.path ?? "")
                guard head.path?.hasPrefix("/at-once") == true else { return nil }
                return HTTPResponse(status: .ok, headerFields: [HTTPField.Name("X-Path")!: head.path!])
            }
            try channel.pipeline.syncOperations.addHandler(handler)
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 8089)).wait()
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

    static func paths(_ parts: [HTTPResponsePart]) -> [String] {
        parts.compactMap { if case .head(let head) = $0 { head.headerFields[HTTPField.Name("X-Path")!] } else { nil } }
    }

    @Test func aRequestDecidedAtOnceIsAnsweredHereAndNeverHandedOn() throws {
        let connection = try Channel()
        try connection.read([.head(Self.request("/at-once/1")), .end(nil)])
        #expect(try connection.handedOn().isEmpty)
        let answer = try connection.answered()
        #expect(answer.count == 2)
        guard case .head(let head) = answer.first, case .end = answer.last else { Issue.record("\(answer)"); return }
        #expect(head.status == .ok)
        #expect(head.headerFields[.contentLength] == "0")
        #expect(connection.channel.isActive)
    }

    @Test func aRequestThatMustWaitIsHandedOnWhole() throws {
        let connection = try Channel()
        try connection.read([.head(Self.request("/verify")), .end(nil)])
        let parts = try connection.handedOn()
        #expect(parts.count == 2)
        guard case .head(let head) = parts.first, case .end = parts.last else { Issue.record("\(parts)"); return }
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
            Issue.record("\(parts)"); return
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
        try connection.read([.head(Self.request("/at-once/last", [.connection: "close"])), .end(nil),
                             .head(Self.request("/at-once/after")), .end(nil)])
        #expect(Self.paths(try connection.answered()) == ["/at-once/last"])
        #expect(try connection.handedOn().isEmpty)
        #expect(connection.asked == ["/at-once/last"])
        #expect(!connection.channel.isActive, "closed once the answer was written")
    }

    /// RFC 9110's IMF-fixdate, against Python's `strftime("%a, %d %b %Y %H:%M:%S GMT")` in UTC.
    @Test(arguments: [(Int64(0), "Thu, 01 Jan 1970 00:00:00 GMT"), (951_782_400, "Tue, 29 Feb 2000 00:00:00 GMT"),
                      (1_795_833_000, "Sat, 28 Nov 2026 02:30:00 GMT"), (4_102_444_799, "Thu, 31 Dec 2099 23:59:59 GMT")])
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
}
