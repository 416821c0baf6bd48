import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import Testing

@testable import GateTestSupport
@testable import TokenGate

/// W3C trace context (docs/DESIGN.md#trace-context): the caller's
/// `traceparent` names the trace of every line logged about its request, a
/// malformed or doubled one starts a new trace, and neither changes a decision.
@Suite struct TraceContextTests {
    static let valid = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    let clock = GateFixtures.Clock()

    @Test func aWellFormedTraceparentIsRead() throws {
        let parent = try #require(TraceParent(Self.valid))
        #expect(parent.traceID == "4bf92f3577b34da6a3ce929d0e0e4736")
        #expect(parent.parentID == "00f067aa0ba902b7")
        #expect(parent.flags == 1)
        // A later version is read by its first four fields, whatever follows a dash.
        let future = try #require(TraceParent("cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00-what-the-future-holds"))
        #expect(future.traceID == "4bf92f3577b34da6a3ce929d0e0e4736")
        #expect(TraceParent("cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00") != nil)
    }

    @Test(arguments: [
        "",
        "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",  // upper case
        "00-00000000000000000000000000000000-00f067aa0ba902b7-01",  // all-zero trace id
        "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",  // all-zero parent id
        "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",  // the forbidden version
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",  // version 00 is exactly 55
        "cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00x",  // a later version, not a dash after the flags
        "00-4bf92f3577b34da6a3ce929d0e0e473-600f067aa0ba902b7-01",  // a misplaced dash
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0g",
        "00_4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7_01",
        " 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\u{202E}",
    ])
    func aMalformedTraceparentIsRefused(value: String) {
        #expect(TraceParent(value) == nil, "\(value)")
    }

    /// Each request gets a span of its own; one without a valid parent gets a trace of its own.
    @Test func idsAreLowercaseHexAndNeverRepeat() {
        let traced = RequestTrace(traceParents: [Self.valid])
        let again = RequestTrace(traceParents: [Self.valid])
        let doubled = RequestTrace(traceParents: [Self.valid, Self.valid])
        let fresh = RequestTrace(traceParents: [])
        let other = RequestTrace(traceParents: [])
        #expect(traced.ids.traceID == "4bf92f3577b34da6a3ce929d0e0e4736")
        #expect(traced.ids == traced.ids, "one request names one span in all its lines")
        #expect(traced.ids.spanID != again.ids.spanID && traced.ids.spanID != "00f067aa0ba902b7")
        #expect(doubled.ids.traceID != Self.valid.split(separator: "-")[1])
        #expect(fresh.ids.traceID != other.ids.traceID)
        for ids in [traced.ids, again.ids, doubled.ids, fresh.ids, other.ids] {
            #expect(ids.traceID.count == 32 && ids.spanID.count == 16)
            #expect((ids.traceID + ids.spanID).allSatisfy { "0123456789abcdef".contains($0) })
            #expect(ids.traceID != String(repeating: "0", count: 32) && ids.spanID != String(repeating: "0", count: 16))
        }
    }

    /// A line logged while a request is served, from any layer, names the request's trace; one logged outside none.
    @Test func everyLineLoggedWhileServingARequestNamesItsTrace() async {
        let logs = LogCapture()
        let logger = logs.logger
        let trace = RequestTrace(traceParents: [Self.valid])
        await RequestTrace.$current.withValue(trace) {
            await Task.yield()
            logger.warning("replay check unavailable: token accepted (--replay-failure open)")
        }
        logger.notice("key reload")
        let lines = logs.all
        #expect(lines.count == 2)
        #expect(lines[0].contains("trace_id=4bf92f3577b34da6a3ce929d0e0e4736"), "\(lines[0])")
        #expect(lines[0].contains("span_id=\(trace.ids.spanID)"), "\(lines[0])")
        #expect(!lines[1].contains("trace_id") && !lines[1].contains("span_id"), "\(lines[1])")
    }

    /// Through the gate: the refusal's line names the caller's trace, or a new
    /// one for a malformed or doubled `traceparent`; the answer is the same.
    @Test func aRefusalNamesTheCallersTraceAndNoTraceChangesTheAnswer() async throws {
        let logs = LogCapture()
        let name = HTTPField.Name("traceparent")!
        let forged = GateFixtures.token(key: GateFixtures.untrustedKey)
        var doubled = HTTPFields()
        doubled.append(HTTPField(name: name, value: Self.valid))
        doubled.append(HTTPField(name: name, value: Self.valid))
        let cases: [HTTPFields] = [[name: Self.valid], [name: "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01"], doubled, [:]]
        let runtime = try GateFixtures.runtime([], clock: clock, logs: logs)
        try await runtime.application().test(.router) { client in
            for headers in cases {
                let response = try await client.authRequest("/a?token=\(forged)", headers: headers)
                #expect(response.status == .forbidden)
                #expect(response.tokenStatus == "INVALID_SIGNATURE")
                #expect(response.headers[name] == nil)
            }
        }
        let refusals = logs.all.filter { $0.contains(" refused ") }
        try #require(refusals.count == 4, "\(logs.all)")
        func ids(_ line: String) -> (trace: String, span: String)? {
            guard let trace = line.firstMatch(of: /trace_id=([0-9a-f]{32})(\s|$)/),
                let span = line.firstMatch(of: /span_id=([0-9a-f]{16})(\s|$)/)
            else { return nil }
            return (String(trace.1), String(span.1))
        }
        let found = refusals.compactMap(ids)
        try #require(found.count == 4, "\(refusals)")
        #expect(found[0].trace == "4bf92f3577b34da6a3ce929d0e0e4736")
        #expect(found[0].span != "00f067aa0ba902b7")
        for index in 1..<4 { #expect(found[index].trace != found[0].trace, "\(refusals[index])") }
        #expect(Set(found.map(\.trace)).count == 4 && Set(found.map(\.span)).count == 4)
    }
}
