import EntitlementTokens
import Foundation
import IntegrationSupport
import Testing

@testable import GateTestSupport
@testable import TokenGate

/// `--otlp-endpoint` (docs/DESIGN.md#span-export): a span per decision, sent
/// over OTLP/HTTP to a receiver that decodes it with the OpenTelemetry
/// project's own protobuf definitions (`opentelemetry-proto` from PyPI), from
/// a `tokengate serve` process whose replay store is a real redis-server.
@Suite(.serialized) struct SpanExportTests {
    static let parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    static let unsampled = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00"

    /// The receiver: `Fixtures/OTLP/otlp_receiver.py`, on a free port, writing what it decoded as JSON lines.
    final class Receiver {
        let process = Process()
        let directory: URL
        let port: Int
        var out: URL { directory.appendingPathComponent("spans.jsonl") }

        init(status: Int = 200, options: [String] = []) throws {
            guard let python = IndependentPython.path else { throw RawHTTP.Failure(description: "no Python venv (scripts/test installs it)") }
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("otlp-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            self.directory = directory
            let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("Fixtures/OTLP/otlp_receiver.py")
            let portFile = directory.appendingPathComponent("port")
            let process = self.process
            process.executableURL = URL(fileURLWithPath: python)
            process.arguments =
                [script.path, portFile.path, directory.appendingPathComponent("spans.jsonl").path]
                + (status == 200 ? [] : ["--status", String(status)]) + options
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            var found: Int?
            _ = eventually(within: 20) {
                found = (try? String(contentsOf: portFile, encoding: .utf8)).flatMap { Int($0) }
                return found != nil || !process.isRunning
            }
            guard let found else {
                process.terminate()
                throw RawHTTP.Failure(description: "the OTLP receiver did not start")
            }
            port = found
        }

        /// Every line the receiver wrote: exports, spans and errors.
        var lines: [[String: Any]] {
            ((try? String(contentsOf: out, encoding: .utf8)) ?? "").split(separator: "\n").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
        }
        var spans: [[String: Any]] { lines.filter { $0["span_id"] != nil } }

        deinit {
            process.terminate()
            if eventually(within: 5, { !process.isRunning }).held == false {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
            }
            try? FileManager.default.removeItem(at: directory)
        }
    }

    static func mediaToken() throws -> String {
        var request = GateFixtures.request(.media)
        request.issueTime = TokenTimestamp.now()
        request.encoding = .base64url
        return try TokenMinter.mint(request, key: GateFixtures.signingKey)
    }

    /// `/v1/auth-request` as nginx asks it: the player's request in `X-Original-URI`.
    static func ask(_ gate: GateProcess, _ token: String, _ headers: [(String, String)] = []) throws -> RawHTTP.Answer {
        try RawHTTP.get(port: gate.port, "/v1/auth-request", headers: [("X-Original-URI", "/live/tnt.m3u8?token=\(token)")] + headers)
    }

    static func metric(_ gate: GateProcess, _ line: String) throws -> Bool {
        try RawHTTP.get(port: gate.port, "/metrics").body.split(separator: "\n").contains { $0 == line }
    }

    /// An allow, a replay and a forgery, each a span with its trace, its
    /// parent, the caller's `tracestate`, the decision and the store's time;
    /// a caller's unsampled trace, a probe and a 404 make none; the span ids
    /// are the ones the log names; the last request's span leaves at SIGTERM.
    /// An export request as a receiver built on the OpenTelemetry project's own
    /// protobuf definitions reads it: one row a span, `row` a Python expression
    /// of the span `s` and its attributes `a` (key to `AnyValue`).
    static func receivedSpans(_ body: [UInt8], row: String) throws -> [[Any]] {
        let decoded = try IndependentPython.run(
            """
            import sys, json
            from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
            r = trace_service_pb2.ExportTraceServiceRequest()
            r.ParseFromString(bytes.fromhex(sys.stdin.read()))
            out = []
            for rs in r.resource_spans:
                for ss in rs.scope_spans:
                    for s in ss.spans:
                        a = {kv.key: kv.value for kv in s.attributes}
                        out.append(\(row.split(separator: "\n").joined(separator: " ")))
            print(json.dumps(out))
            """,
            input: body.map { String(format: "%02x", $0) }.joined()
        )
        return try #require(try JSONSerialization.jsonObject(with: Data(decoded.utf8)) as? [[Any]])
    }

    @Test(
        .enabled(if: IndependentPython.available(["opentelemetry.proto"]), "pip install opentelemetry-proto"),
        .enabled(if: Integration.redis && ExecutableTests.binary != nil, "redis-server or the tokengate executable missing")
    )
    func eachDecisionIsASpanTheReceiverDecodes() async throws {
        // The spans' times are this test's: after its start, before their decoding (a
        // bound in seconds would measure how busy the machine is, not the spans).
        let testStarted = Int(Date().timeIntervalSince1970 * 1e9)
        let receiver = try Receiver()
        let redis = try RedisServer()
        defer { redis.remove() }
        let gate = try GateProcess(["--replay", "redis://127.0.0.1:\(redis.port)", "--otlp-endpoint", "http://127.0.0.1:\(receiver.port)"])
        defer { gate.stop() }
        let token = try Self.mediaToken()
        let state = "congo=t61rcWkgMzE, rojo=00f067aa0ba902b7"
        let traced = [("traceparent", Self.parent), ("tracestate", state)]
        #expect(try Self.ask(gate, token, traced).status == 200)
        #expect(try Self.ask(gate, token, traced).tokenStatus == "TOKEN_REPLAYED")
        let forged = GateFixtures.token(key: GateFixtures.untrustedKey)
        #expect(try Self.ask(gate, forged).status == 403)
        #expect(try Self.ask(gate, forged, [("traceparent", Self.unsampled)]).status == 403)
        #expect(try RawHTTP.get(port: gate.port, "/healthz").status == 200)
        #expect(try RawHTTP.get(port: gate.port, "/nowhere").status == 404)

        let arrived = eventually(within: 10) { receiver.spans.count >= 3 }
        #expect(arrived.held, "\(receiver.lines)")
        try await Task.sleep(for: .milliseconds(1500))  // one more export period: nothing else may come
        let spans = receiver.spans
        try #require(spans.count == 3, "\(receiver.lines)")
        #expect(receiver.lines.allSatisfy { $0["error"] == nil }, "\(receiver.lines)")
        func attributes(_ span: [String: Any]) -> [String: Any] { span["attributes"] as? [String: Any] ?? [:] }
        let allowed = try #require(spans.first { attributes($0)["http.response.status_code"] as? Int == 200 })
        let replayed = try #require(spans.first { attributes($0)["tokengate.status"] as? String == "TOKEN_REPLAYED" })
        let refused = try #require(spans.first { attributes($0)["tokengate.status"] as? String == "INVALID_SIGNATURE" })

        for span in [allowed, replayed] {
            #expect(span["trace_id"] as? String == "4bf92f3577b34da6a3ce929d0e0e4736")
            #expect(span["parent_span_id"] as? String == "00f067aa0ba902b7")
            #expect(span["trace_state"] as? String == "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7")
            #expect(span["flags"] as? Int == 0x301, "sampled, with a remote parent")
            #expect(attributes(span)["tokengate.resource"] as? String == "TNT")
            let store = try #require(attributes(span)["tokengate.replay_store.duration"] as? Double, "\(span)")
            #expect(store > 0 && store < 1)
        }
        #expect(allowed["span_id"] as? String != replayed["span_id"] as? String)
        #expect(refused["trace_id"] as? String != "4bf92f3577b34da6a3ce929d0e0e4736")
        #expect(refused["parent_span_id"] as? String == "" && refused["trace_state"] as? String == "")
        #expect(attributes(refused)["tokengate.replay_store.duration"] == nil, "a forgery never reaches the store")
        for span in spans {
            #expect(span["name"] as? String == "GET /v1/auth-request")
            #expect(span["kind"] as? Int == 2, "SPAN_KIND_SERVER")
            #expect(span["status_code"] as? Int == 0, "an answer below 500 leaves the status unset")
            #expect(attributes(span)["http.route"] as? String == "/v1/auth-request")
            #expect(attributes(span)["http.request.method"] as? String == "GET")
            #expect((attributes(span)["tokengate.token_id"] as? String)?.count == 12)
            #expect(!(attributes(span)["tokengate.reason"] as? String ?? "").isEmpty)
            let start = try #require(span["start"] as? Int)
            let end = try #require(span["end"] as? Int)
            let now = Int(Date().timeIntervalSince1970 * 1e9)
            #expect(testStarted <= start && start <= end && end <= now, "\(testStarted) \(start) \(end) \(now)")
            let resource = span["resource"] as? [String: Any] ?? [:]
            #expect(resource["service.name"] as? String == "tokengate")
            #expect(resource["service.version"] as? String == ProductVersion.version)
            #expect(span["scope"] as? String == "tokengate")
            #expect((span["trace_id"] as? String)?.count == 32 && (span["span_id"] as? String)?.count == 16)
        }
        // The refusals' log lines name the exported spans.
        for span in [replayed, refused] {
            let line = "\"span_id\":\"\(span["span_id"] as? String ?? "?")\""
            #expect(
                gate.log.split(separator: "\n").contains {
                    $0.contains(line) && $0.contains("\"trace_id\":\"\(span["trace_id"] as? String ?? "?")\"")
                },
                "\(line) in \(gate.log.suffix(1500))"
            )
        }
        #expect(try Self.metric(gate, "tokengate_spans_exported_total 3"))
        #expect(try Self.metric(gate, "tokengate_spans_dropped_total{reason=\"export-failed\"} 0"))

        // The last request's span leaves at SIGTERM, before the 1 s export period.
        #expect(try Self.ask(gate, try Self.mediaToken()).status == 200)
        gate.process.terminate()
        #expect(gate.waitForExit(seconds: 10) == 0)
        #expect(receiver.spans.count == 4, "\(receiver.lines)")
    }

    /// A receiver that refuses, or none at all: every answer as without
    /// tracing, the spans counted as dropped, one warning (not one per batch).
    @Test(
        .enabled(if: IndependentPython.available(["opentelemetry.proto"]), "pip install opentelemetry-proto"),
        .enabled(if: ExecutableTests.binary != nil, "the tokengate executable is not built"),
        arguments: [true, false]
    )
    func aReceiverThatRefusesOrIsGoneChangesNoAnswer(receiverRefuses: Bool) async throws {
        let receiver = receiverRefuses ? try Receiver(status: 503) : nil
        let port = try receiver?.port ?? RawHTTP.freePort()
        let gate = try GateProcess(["--otlp-endpoint", "http://127.0.0.1:\(port)/v1/traces"])
        defer { gate.stop() }
        let forged = GateFixtures.token(key: GateFixtures.untrustedKey)
        for round in 0..<3 {
            let token = try Self.mediaToken()
            #expect(try Self.ask(gate, token).status == 200)
            #expect(try Self.ask(gate, token).tokenStatus == "TOKEN_REPLAYED")
            #expect(try Self.ask(gate, forged).status == 403)
            if round < 2 { try await Task.sleep(for: .milliseconds(1200)) }  // each round in an export of its own
        }
        let dropped = eventually(within: 10) { try Self.metric(gate, "tokengate_spans_dropped_total{reason=\"export-failed\"} 9") }
        let spanSeries = try RawHTTP.get(port: gate.port, "/metrics").body.split(separator: "\n").filter { $0.contains("spans") }
        #expect(dropped.held, "\(spanSeries)")
        #expect(try Self.metric(gate, "tokengate_spans_exported_total 0"))
        let warnings = gate.log.split(separator: "\n").filter { $0.contains("span export failed") }
        #expect(warnings.count == 1, "\(gate.log.suffix(2000))")
        #expect(warnings.first?.contains(receiverRefuses ? "answered 503" : "could not connect") == true, "\(warnings)")
        if let receiver {
            #expect(receiver.lines.filter { $0["export"] != nil }.count >= 2, "the refusals were answers to real exports: \(receiver.lines)")
        }
    }

    /// One connection is kept across exports while the receiver keeps it; a
    /// receiver that closes after each answer, or closes a kept connection
    /// while it is idle, loses no span: the next export goes on a new one.
    @Test(
        .enabled(if: IndependentPython.available(["opentelemetry.proto"]), "pip install opentelemetry-proto"),
        .enabled(if: ExecutableTests.binary != nil, "the tokengate executable is not built"),
        arguments: [[], ["--close"], ["--idle-timeout", "0.3"]]
    )
    func exportsKeepOneConnectionWhileTheReceiverKeepsIt(receiverOptions: [String]) async throws {
        let receiver = try Receiver(options: receiverOptions)
        let gate = try GateProcess(["--otlp-endpoint", "http://127.0.0.1:\(receiver.port)"])
        defer { gate.stop() }
        for round in 0..<3 {
            #expect(try Self.ask(gate, try Self.mediaToken()).status == 200)
            let arrived = eventually(within: 10) { receiver.spans.count == round + 1 }
            #expect(arrived.held, "\(receiver.lines)")
        }
        let peers = receiver.lines.compactMap { $0["peer"] as? Int }
        #expect(peers.count == 3, "one export a round: \(receiver.lines)")
        #expect(Set(peers).count == (receiverOptions.isEmpty ? 1 : 3), "\(peers)")
        #expect(try Self.metric(gate, "tokengate_spans_exported_total 3"))
        #expect(try Self.metric(gate, "tokengate_spans_dropped_total{reason=\"export-failed\"} 0"))
        #expect(!gate.log.contains("span export failed"), "\(gate.log.suffix(1500))")
    }

    /// Parent-based sampling: a caller's unsampled trace records no span; no trace, or a sampled one, does.
    @Test func aCallersUnsampledTraceIsNotRecorded() {
        #expect(RequestTrace(traceParents: [Self.unsampled], sampler: .always).span == nil)
        #expect(RequestTrace(traceParents: [Self.parent], sampler: .always).span != nil)
        #expect(RequestTrace(traceParents: [], sampler: .always).span != nil)
        #expect(RequestTrace(traceParents: [Self.unsampled, Self.unsampled], sampler: .always).span != nil, "doubled: a new trace")
        #expect(RequestTrace(traceParents: [Self.parent]).span == nil, "without --otlp-endpoint nothing is recorded")
    }

    /// `--trace-sample-ratio`: a trace the gate starts is recorded by ratio,
    /// decided by its id's random part; a caller's decision is kept at any ratio.
    @Test func aRatioSamplesTheTracesTheGateStartsAndNeverOverrulesACaller() {
        func recorded(_ ratio: Double, _ count: Int) -> [RequestTrace] {
            let sampler = TraceSampler(ratio: ratio)
            return (0..<count).map { _ in RequestTrace(traceParents: [], sampler: sampler) }.filter { $0.span != nil }
        }
        #expect(recorded(0, 5000).isEmpty)
        #expect(recorded(1, 5000).count == 5000)
        // 20,000 draws at 10 %: 2,000 expected, a standard deviation of 42.
        let tenth = recorded(0.1, 20_000)
        #expect((1700...2300).contains(tenth.count), "\(tenth.count) of 20000")
        // The decision is the trace id's: its last 7 bytes at or above (1 − 0.1) × 2^56.
        for trace in tenth {
            let low = trace.spanIdentity.traceID.low & 0x00FF_FFFF_FFFF_FFFF
            #expect(Double(low) >= 0.9 * 0x1p56)
        }
        for ratio in [0.0, 0.5] {
            #expect(RequestTrace(traceParents: [Self.parent], sampler: TraceSampler(ratio: ratio)).span != nil, "a sampled caller at \(ratio)")
        }
        #expect(RequestTrace(traceParents: [Self.unsampled], sampler: .always).span == nil)
    }

    /// The protobuf is written once, in place, with every nested length
    /// computed first: lengths of one, two and three bytes at every level
    /// decode with the OpenTelemetry project's definitions, and a batch
    /// stays under its byte bound.
    @Test(.enabled(if: IndependentPython.available(["opentelemetry.proto"]), "pip install opentelemetry-proto"))
    func longStringsAtEveryLevelDecodeAndTheBoundHolds() throws {
        let lengths = [0, 1, 126, 127, 128, 16_383, 16_384, 70_000]
        let spans = lengths.map { length in
            DecisionSpan(
                identity: RequestTrace(
                    traceParents: [Self.parent],
                    traceStates: ["k=" + String(repeating: "v", count: max(1, min(length, 200)))],
                    sampler: .always
                )
                .spanIdentity,
                decision: SpanDecision(
                    method: "GET",
                    route: "/v1/auth-request",
                    status: "TOKEN_EXPIRED",
                    reason: String(repeating: "r", count: length),
                    resource: String(repeating: "é", count: length / 2),
                    tokenID: "abcdefabcdef",
                    kind: "media",
                    profile: length > 100 ? "akamai" : nil
                ),
                startUnixNanoseconds: 1_700_000_000_000_000_000,
                endUnixNanoseconds: 1_700_000_000_000_100_000,
                httpStatus: length % 2 == 0 ? 503 : 200,
                storeNanoseconds: Int64(length)
            )
        }
        let service = OTLPTraceRequest.Service(instance: "instance")
        let body = OTLPTraceRequest.encode(spans, service: service)
        let rows = try Self.receivedSpans(
            body,
            row: """
                [len(a["tokengate.reason"].string_value), len(a["tokengate.resource"].string_value),
                 len(s.trace_state), s.status.code, len(s.status.message),
                 a["tokengate.replay_store.duration"].double_value, s.name]
                """
        )
        #expect(rows.count == lengths.count)
        for (row, length) in zip(rows, lengths) {
            #expect(row[0] as? Int == length && row[1] as? Int == length / 2, "\(row)")
            #expect(row[2] as? Int == 2 + max(1, min(length, 200)))
            // A 5xx is an error whose message is the reason; below, no status.
            #expect(row[3] as? Int == (length % 2 == 0 ? 2 : 0) && row[4] as? Int == (length % 2 == 0 ? length : 0), "\(row)")
            #expect(row[5] as? Double == Double(length) / 1e9 && row[6] as? String == "GET /v1/auth-request")
        }
        // A queue of long spans leaves in batches cut by bytes, each a request
        // the receiver reads whole; a span longer than the bound leaves alone.
        var queue = SpanQueue()
        var ready = 0
        for _ in 0..<40 {
            if case .queued(batchReady: true) = queue.add(OTLPTraceRequest.encodedSpan(spans[6])) { ready += 1 }
        }
        #expect(ready > 0 && queue.count == 40)
        var batches: [SpanQueue.Batch] = []
        while let batch = queue.next() { batches.append(batch) }
        #expect(batches.count == ready + 1 && batches.map(\.count).reduce(0, +) == 40 && queue.count == 0)
        #expect(batches.allSatisfy { $0.count >= 1 && $0.encoded.count <= SpanQueue.batchBytes })
        let wrapped = OTLPTraceRequest.encode(encodedSpans: batches[0].encoded, service: service)
        #expect(try Self.receivedSpans(wrapped, row: "[s.name]").count == batches[0].count)
        var huge = SpanQueue()
        let longest = OTLPTraceRequest.encodedSpan(
            DecisionSpan(
                identity: spans[0].identity,
                decision: SpanDecision(
                    method: "GET",
                    route: "/v1/auth-request",
                    status: "TOKEN_EXPIRED",
                    reason: String(repeating: "r", count: SpanQueue.batchBytes),
                    resource: nil,
                    tokenID: nil,
                    kind: "media"
                ),
                startUnixNanoseconds: 1,
                endUnixNanoseconds: 2,
                httpStatus: 200,
                storeNanoseconds: nil
            )
        )
        #expect(huge.add(longest) == .queued(batchReady: false) && huge.add(longest) == .queued(batchReady: true))
        #expect(huge.next()?.count == 1 && huge.next()?.count == 1 && huge.next() == nil && huge.bytes == 0)
        // The queue is bounded in bytes too: long spans fill it before its count does.
        let fitting = SpanQueue.capacityBytes / longest.count
        for _ in 0..<fitting { #expect(huge.add(longest) != .full) }
        #expect(huge.add(longest) == .full && huge.count == fitting && huge.bytes <= SpanQueue.capacityBytes)
        _ = huge.next()
        #expect(huge.add(longest) != .full)
        // Short spans fill a batch by count: the 512th makes it ready.
        var short = SpanQueue()
        let small = OTLPTraceRequest.encodedSpan(spans[0])
        let readyAt = (1...600).filter { _ in short.add(small) == .queued(batchReady: true) }
        #expect(readyAt.count == 1 && short.next()?.count == SpanQueue.batchSize && short.next()?.count == 600 - SpanQueue.batchSize)
    }

    /// Every shape a span takes, each optional field present and absent, a 5xx
    /// and not: each is written at the length summed for it (a longer write
    /// would stop the process) and the receiver reads every field back.
    @Test(.enabled(if: IndependentPython.available(["opentelemetry.proto"]), "pip install opentelemetry-proto"))
    func everyShapeOfSpanIsWrittenAtItsLength() throws {
        var spans: [DecisionSpan] = []
        for shape in 0..<64 {
            let has = { (bit: Int) in shape & (1 << bit) != 0 }
            spans.append(
                DecisionSpan(
                    identity: RequestTrace(
                        traceParents: has(0) ? [Self.parent] : [],
                        traceStates: has(0) ? ["k=v"] : [],
                        sampler: .always
                    ).spanIdentity,
                    decision: SpanDecision(
                        method: "GET",
                        route: "/v1/auth-request",
                        status: "VALID_TOKEN",
                        reason: has(5) ? "the replay store did not answer" : "",
                        resource: has(1) ? "TNT" : nil,
                        tokenID: has(2) ? "abcdef" : nil,
                        kind: "media",
                        profile: has(3) ? "akamai" : nil
                    ),
                    startUnixNanoseconds: UInt64(shape),
                    endUnixNanoseconds: UInt64(shape) + 1,
                    httpStatus: has(5) ? 503 : 200,
                    storeNanoseconds: has(4) ? Int64(shape) : nil
                )
            )
        }
        let body = OTLPTraceRequest.encode(spans, service: .init(instance: "instance"))
        let rows = try Self.receivedSpans(
            body,
            row: """
                [s.start_time_unix_nano, len(s.parent_span_id) > 0, s.trace_state,
                 sorted(kv.key for kv in s.attributes), s.status.code, s.flags]
                """
        )
        #expect(rows.count == 64)
        for (shape, row) in rows.enumerated() {
            let has = { (bit: Int) in shape & (1 << bit) != 0 }
            var keys = ["http.request.method", "http.response.status_code", "http.route", "tokengate.kind", "tokengate.reason", "tokengate.status"]
            if has(1) { keys.append("tokengate.resource") }
            if has(2) { keys.append("tokengate.token_id") }
            if has(3) { keys.append("tokengate.cdn_profile") }
            if has(4) { keys.append("tokengate.replay_store.duration") }
            #expect(row[0] as? Int == shape && row[1] as? Bool == has(0) && row[2] as? String == (has(0) ? "k=v" : ""), "\(row)")
            #expect(row[3] as? [String] == keys.sorted(), "\(row)")
            #expect(row[4] as? Int == (has(5) ? 2 : 0) && row[5] as? Int == (has(0) ? 0x301 : 0x101), "\(row)")
        }
    }

    /// The exported ids are the logged ones, as numbers.
    @Test func theSpanIdentityIsTheLoggedIDs() {
        let trace = RequestTrace(traceParents: [Self.parent], traceStates: ["a=1", "b=2"], sampler: .always)
        let identity = trace.spanIdentity
        func hex(_ word: UInt64) -> String { String(format: "%016llx", word) }
        func hex(_ id: TraceID) -> String { hex(id.high) + hex(id.low) }
        #expect(hex(identity.traceID) == trace.ids.traceID && hex(identity.spanID) == trace.ids.spanID)
        #expect(identity.parentSpanID.map(hex) == "00f067aa0ba902b7")
        #expect(identity.traceState == "a=1,b=2")
        let fresh = RequestTrace(traceParents: [], traceStates: ["a=1"], sampler: .always)
        #expect(hex(fresh.spanIdentity.traceID) == fresh.ids.traceID)
        #expect(fresh.spanIdentity.traceState == nil, "a tracestate without a valid traceparent is dropped")
    }

    @Test(
        arguments: [
            (["congo=t61rcWkgMzE"], "congo=t61rcWkgMzE"),
            (["rojo=00f067aa0ba902b7, congo=t61rcWkgMzE", "x@y=1"], "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE,x@y=1"),
            ([" a=1 ,, b=2\t"], "a=1,b=2"),
            (["Upper=1"], nil),  // keys are lower case
            (["a=1,a=2"], nil),  // a key twice
            (["a=1,b"], nil),  // no value
            (["a=b=c"], nil),  // '=' in a value
            (["a=x\u{7F}"], nil),  // DEL
            (["a=\u{00E9}"], nil),  // not ASCII
            (["1a=1"], nil),  // a simple key starts with a letter
            (["t@abcdefghijklmno=1"], nil),  // a system id of 15
            ([(0..<33).map { "k\($0)=v" }.joined(separator: ",")], nil),  // 33 members
            ([""], nil),
        ] as [([String], String?)]
    )
    func traceStateFollowsTheW3CGrammar(values: [String], expected: String?) {
        #expect(TraceState.combined(values) == expected, "\(values)")
    }

    @Test(arguments: [
        ("http://127.0.0.1:4318/v1/traces", "http://127.0.0.1:4318/v1/traces"),
        ("http://collector", "http://collector:4318/v1/traces"),
        ("http://collector:9999/", "http://collector:9999/v1/traces"),
        ("http://[::1]:4318/otlp/v1/traces", "http://[::1]:4318/otlp/v1/traces"),
    ])
    func anEndpointIsReadAsOTLPNamesIt(text: String, expected: String) throws {
        #expect(try OTLPEndpoint(text).description == expected)
    }

    @Test(arguments: [
        "https://collector:4318", "collector:4318", "http://", "http://user:secret@collector", "http://collector:0",
        "http://collector:70000", "http://collector/v1/traces?x=1", "http://collector/#f", "http://[::1", "http://col lector",
        "http://collector/\u{1B}[31m",
    ])
    func aBadEndpointIsRefusedWithoutEchoingControls(text: String) {
        do {
            _ = try OTLPEndpoint(text)
            Issue.record("accepted \(text)")
        } catch {
            #expect(error.description.hasPrefix("--otlp-endpoint"))
            #expect(!error.description.contains("\u{1B}"))
            #expect(!error.description.contains("secret"), "a password in the URL is never repeated")
        }
    }

    /// The queue is bounded: past its capacity a span is dropped and counted, never waited for.
    @Test func aFullQueueDropsAndCounts() throws {
        let metrics = GateMetrics()
        let exporter = SpanExporter(endpoint: try OTLPEndpoint("http://127.0.0.1:9"), metrics: metrics, logger: .init(label: "test"))
        let decision = SpanDecision(
            method: "GET",
            route: "/v1/auth-request",
            status: "VALID_TOKEN",
            reason: "",
            resource: nil,
            tokenID: nil,
            kind: "media"
        )
        let span = DecisionSpan(
            identity: RequestTrace(traceParents: []).spanIdentity,
            decision: decision,
            startUnixNanoseconds: 1,
            endUnixNanoseconds: 2,
            httpStatus: 200,
            storeNanoseconds: nil
        )
        for _ in 0..<(SpanQueue.capacity + 5) { exporter.submit(span) }
        let text = String(decoding: metrics.render(), as: UTF8.self)
        #expect(text.contains("tokengate_spans_dropped_total{reason=\"queue-full\"} 5"), "\(text)")
    }
}
