import HTTPTypes
import NIOCore
import NIOEmbedded
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import Testing
import TokenTestSupport

@testable import TokenGate

/// The gate's codec against NIOHTTPTypes' conversion, which it replaces: the
/// same `HTTPRequest` for every request target and header list, drawn and
/// chosen, and the same parts through a channel.
@Suite struct HTTP1ToHTTPTypesCodecTests {
    static func head(_ target: String, method: HTTPMethod = .GET, headers: [(String, String)] = [("Host", "gate.test")]) -> HTTPRequestHead {
        HTTPRequestHead(version: .http1_1, method: method, uri: target, headers: HTTPHeaders(headers))
    }

    static func expectSameAsNIOHTTPTypes(_ head: HTTPRequestHead, sourceLocation: SourceLocation = #_sourceLocation) {
        let theirs = Result { try HTTPRequest(head, secure: false, splitCookie: false) }
        let ours = Result { try HTTP1ToHTTPTypesCodec.request(head) }
        switch (theirs, ours) {
        case (.success(let theirs), .success(let ours)):
            #expect(ours == theirs, "\(head.uri)", sourceLocation: sourceLocation)
            #expect(ours.path == theirs.path && ours.authority == theirs.authority, "\(head.uri)", sourceLocation: sourceLocation)
        case (.failure, .failure):
            break
        default:
            Issue.record("\(head.method) \(head.uri): NIOHTTPTypes \(theirs), the codec \(ours)", sourceLocation: sourceLocation)
        }
    }

    @Test(arguments: [
        "/", "/v1/auth-request", "/v1/playback?token=abc&resource=TNT", "/hls/tnt/../../etc/passwd", "/a%2F..%2Fb?x=%00",
        "//evil.test/path", "/?", "/#fragment", "/path?q=1#f", "/é/ü?ä=ö", "*", "http://other.test/v1/auth-request?token=1",
        "https://other.test:8443", "HTTP://x/y", "other.test:443", "v1/auth-request", "", "/a b", "/%zz", "mailto:x@y",
    ])
    func everyTargetGivesNIOHTTPTypesRequest(target: String) {
        Self.expectSameAsNIOHTTPTypes(Self.head(target))
        Self.expectSameAsNIOHTTPTypes(Self.head(target, method: .OPTIONS, headers: []))
    }

    @Test func headerListsGiveNIOHTTPTypesRequest() {
        let lists: [[(String, String)]] = [
            [],
            [("host", "a.test"), ("HOST", "b.test")],
            [("X-Original-URI", "/hls/tnt/seg.ts?token=" + String(repeating: "Q", count: 4000)), ("Host", "gate:8089")],
            [("Cookie", "a=1; b=2"), ("Cookie", "c=3"), ("Host", "x")],
            [("X-Token-Resource", "<rss><channel><title>TNT</title></channel></rss>"), ("Host", "")],
        ]
        for headers in lists {
            for method: HTTPMethod in [.GET, .POST, .HEAD, .RAW(value: "BREW")] {
                Self.expectSameAsNIOHTTPTypes(Self.head("/v1/auth-request", method: method, headers: headers))
            }
        }
    }

    /// Targets drawn from the bytes a request line may carry and some it may not:
    /// a slash first (the codec's own path) or not (NIOHTTPTypes' conversion).
    @Test func drawnTargetsGiveNIOHTTPTypesRequest() {
        var generator = SeededGenerator(seed: 0x6874_7470)
        let alphabet = Array("abcXYZ019/?#&=%.:@!$'()*+,;-_~[] \u{7F}é".unicodeScalars)
        for _ in 0..<2_000 {
            let length = Int.random(in: 0...40, using: &generator)
            var target = String(String.UnicodeScalarView((0..<length).map { _ in alphabet.randomElement(using: &generator)! }))
            switch Int.random(in: 0..<4, using: &generator) {
            case 0: target = "/" + target
            case 1: target = "http://h.test/" + target
            default: break
            }
            Self.expectSameAsNIOHTTPTypes(Self.head(target))
        }
    }

    @Test func aRequestAndItsAnswerCrossTheChannelAsParts() throws {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: false)
        try channel.pipeline.syncOperations.addHandler(HTTP1ToHTTPTypesCodec())
        let target = "/v1/playback?token=" + String(repeating: "A", count: 1200)
        try channel.writeInbound(ByteBuffer(string: "POST \(target) HTTP/1.1\r\nHost: gate.test\r\nContent-Length: 2\r\nX-A: 1\r\n\r\n{}"))
        guard case .head(let request) = try channel.readInbound(as: HTTPRequestPart.self) else {
            Issue.record("no head")
            return
        }
        #expect(request.method == .post && request.path == target && request.authority == "gate.test" && request.scheme == "http")
        #expect(request.headerFields[.contentLength] == "2" && request.headerFields[HTTPField.Name("X-A")!] == "1")
        #expect(request.headerFields[HTTPField.Name("Host")!] == nil)
        guard case .body(let body) = try channel.readInbound(as: HTTPRequestPart.self) else {
            Issue.record("no body")
            return
        }
        #expect(String(buffer: body) == "{}")
        guard case .end(nil) = try channel.readInbound(as: HTTPRequestPart.self) else {
            Issue.record("no end")
            return
        }

        try channel.writeOutbound(HTTPResponsePart.head(HTTPResponse(status: .ok, headerFields: [.contentLength: "2", .cacheControl: "no-store"])))
        try channel.writeOutbound(HTTPResponsePart.body(ByteBuffer(string: "ok")))
        try channel.writeOutbound(HTTPResponsePart.end(nil))
        var written = ByteBuffer()
        while var part = try channel.readOutbound(as: ByteBuffer.self) { written.writeBuffer(&part) }
        let text = String(buffer: written)
        #expect(text.hasPrefix("HTTP/1.1 200 OK\r\n") && text.contains("Cache-Control: no-store\r\n") && text.hasSuffix("\r\n\r\nok"), "\(text)")
        _ = try channel.finish()
    }
}
