import EntitlementTokens

/// An OTLP `ExportTraceServiceRequest` of decision spans, in protobuf's
/// binary encoding (https://protobuf.dev/programming-guides/encoding/), as
/// `opentelemetry/proto/collector/trace/v1/trace_service.proto` and
/// `trace/v1/trace.proto` define it: one resource (this gate), one
/// instrumentation scope, the spans.
///
/// Written by hand rather than through a generated protobuf runtime: the
/// gate sends one message shape, and the runtime would cost the binary more
/// than the rest of tracing (docs/DESIGN.md#span-export).
enum OTLPTraceRequest {
    /// The `service.*` attributes of the resource the spans come from.
    struct Service: Sendable {
        var name = "tokengate"
        var version = ProductVersion.version
        /// `service.instance.id`: this process among the fleet's gates.
        var instance: String
    }

    static func encode(_ spans: some Collection<DecisionSpan>, service: Service) -> [UInt8] {
        ProtobufWriter.encode { request in
            // ExportTraceServiceRequest.resource_spans = 1
            request.message(1) { resourceSpans in
                // ResourceSpans.resource = 1
                resourceSpans.message(1) { resource in
                    resource.attribute(1, "service.name", .string(service.name))
                    resource.attribute(1, "service.version", .string(service.version))
                    resource.attribute(1, "service.instance.id", .string(service.instance))
                }
                // ResourceSpans.scope_spans = 2
                resourceSpans.message(2) { scopeSpans in
                    // ScopeSpans.scope = 1: InstrumentationScope name = 1, version = 2
                    scopeSpans.message(1) { scope in
                        scope.string(1, "tokengate")
                        scope.string(2, service.version)
                    }
                    for span in spans {
                        // ScopeSpans.spans = 2
                        scopeSpans.message(2) { encode(span, into: &$0) }
                    }
                }
            }
        }
    }

    /// The most bytes `span` adds to a request: its strings and ids as they
    /// are, and a generous allowance for every tag, length and fixed field.
    /// What a batch's byte bound is counted in, without encoding the span twice.
    static func maximumEncodedBytes(of span: DecisionSpan) -> Int {
        let decision = span.decision
        var bytes = 512 + 16 + 8 + 8  // the ids: trace, span, parent
        bytes += 3 * decision.method.utf8.count + 2 * decision.route.utf8.count  // the name repeats them
        bytes += decision.status.utf8.count + 2 * decision.reason.utf8.count + decision.kind.utf8.count  // the status repeats the reason
        bytes += (decision.resource?.utf8.count ?? 0) + (decision.tokenID?.utf8.count ?? 0) + (decision.profile?.utf8.count ?? 0)
        return bytes + (span.identity.traceState?.utf8.count ?? 0)
    }

    /// Span: trace_id 1, span_id 2, trace_state 3, parent_span_id 4, name 5,
    /// kind 6, start 7, end 8, attributes 9, status 15, flags 16.
    private static func encode(_ span: DecisionSpan, into writer: inout ProtobufWriter) {
        writer.id(1, span.identity.traceID)
        writer.id(2, span.identity.spanID)
        if let state = span.identity.traceState { writer.string(3, state) }
        if let parent = span.identity.parentSpanID { writer.id(4, parent) }
        // The name, `GET /v1/auth-request`: the method and the route, as
        // OpenTelemetry's HTTP conventions name a server span.
        writer.string(5, span.decision.method, " ", span.decision.route)
        writer.varint(6, 2)  // SPAN_KIND_SERVER
        writer.fixed64(7, span.startUnixNanoseconds)
        writer.fixed64(8, span.endUnixNanoseconds)
        writer.attribute(9, "http.request.method", .string(span.decision.method))
        writer.attribute(9, "http.route", .string(span.decision.route))
        writer.attribute(9, "http.response.status_code", .int(Int64(span.httpStatus)))
        writer.attribute(9, "tokengate.status", .string(span.decision.status))
        writer.attribute(9, "tokengate.reason", .string(span.decision.reason))
        writer.attribute(9, "tokengate.kind", .string(span.decision.kind))
        if let resource = span.decision.resource { writer.attribute(9, "tokengate.resource", .string(resource)) }
        if let tokenID = span.decision.tokenID { writer.attribute(9, "tokengate.token_id", .string(tokenID)) }
        if let profile = span.decision.profile { writer.attribute(9, "tokengate.cdn_profile", .string(profile)) }
        if let store = span.storeNanoseconds {
            writer.attribute(9, "tokengate.replay_store.duration", .double(Double(store) / 1e9))
        }
        // Status: message 2, code 3. A server span is an error for a 5xx only
        // (OpenTelemetry's HTTP conventions): a refused token is an answer.
        if span.httpStatus >= 500 {
            writer.message(15) { status in
                status.string(2, span.decision.reason)
                status.varint(3, 2)  // STATUS_CODE_ERROR
            }
        }
        // The W3C flags in the low byte; 0x100: whether the parent is remote is known, 0x200: it is.
        writer.fixed32(16, UInt32(span.identity.flags) | 0x100 | (span.identity.parentSpanID == nil ? 0 : 0x200))
    }
}

/// The protobuf wire format, as much of it as the OTLP request needs.
///
/// A nested message is written length first. Rather than writing each one
/// apart and copying it into its parent, ``encode(_:)`` runs the message's
/// description twice: the first pass only counts, and records every nested
/// message's length in the order they open; the second writes each length
/// from that record, then the message in place, into a buffer of the exact
/// size. The description must say the same thing both times (it is a pure
/// function of its inputs).
struct ProtobufWriter {
    private enum Pass {
        case counting
        case writing
    }

    private var pass = Pass.counting
    private var counted = 0
    /// Every nested message's length, in the order the messages open.
    private var lengths: [Int] = []
    private var nextLength = 0
    private var bytes: [UInt8] = []

    enum AttributeValue {
        case string(String)
        case int(Int64)
        case double(Double)
    }

    /// The message `describe` writes, encoded.
    static func encode(_ describe: (inout ProtobufWriter) -> Void) -> [UInt8] {
        var writer = ProtobufWriter()
        describe(&writer)
        writer.pass = .writing
        writer.bytes.reserveCapacity(writer.counted)
        describe(&writer)
        assert(writer.bytes.count == writer.counted && writer.nextLength == writer.lengths.count)
        return writer.bytes
    }

    mutating func varint(_ field: Int, _ value: UInt64) {
        tag(field, wireType: 0)
        appendVarint(value)
    }

    mutating func fixed64(_ field: Int, _ value: UInt64) {
        tag(field, wireType: 1)
        guard pass == .writing else {
            counted += 8
            return
        }
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    mutating func fixed32(_ field: Int, _ value: UInt32) {
        tag(field, wireType: 5)
        guard pass == .writing else {
            counted += 4
            return
        }
        for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }

    /// A span id: 8 bytes, big-endian.
    mutating func id(_ field: Int, _ word: UInt64) {
        tag(field, wireType: 2)
        appendVarint(8)
        appendBigEndian(word)
    }

    /// A trace id: 16 bytes, big-endian.
    mutating func id(_ field: Int, _ traceID: TraceID) {
        tag(field, wireType: 2)
        appendVarint(16)
        appendBigEndian(traceID.high)
        appendBigEndian(traceID.low)
    }

    mutating func string(_ field: Int, _ value: String) {
        tag(field, wireType: 2)
        let utf8 = value.utf8
        appendVarint(UInt64(utf8.count))
        guard pass == .writing else {
            counted += utf8.count
            return
        }
        bytes += utf8
    }

    /// A string field of three parts, written as one: `first`, `separator`, `last`.
    mutating func string(_ field: Int, _ first: String, _ separator: Unicode.Scalar, _ last: String) {
        tag(field, wireType: 2)
        let length = first.utf8.count + 1 + last.utf8.count
        appendVarint(UInt64(length))
        guard pass == .writing else {
            counted += length
            return
        }
        bytes += first.utf8
        bytes.append(UInt8(ascii: separator))
        bytes += last.utf8
    }

    /// A nested message: its length (counted in the first pass), then its fields.
    mutating func message(_ field: Int, _ body: (inout ProtobufWriter) -> Void) {
        tag(field, wireType: 2)
        switch pass {
        case .counting:
            let index = lengths.count
            lengths.append(0)
            let start = counted
            body(&self)
            let length = counted - start
            lengths[index] = length
            counted += Self.varintSize(UInt64(length))
        case .writing:
            let length = lengths[nextLength]
            nextLength += 1
            appendVarint(UInt64(length))
            body(&self)
        }
    }

    /// A `KeyValue` (key 1, value 2) whose `AnyValue` holds a string (1), an int (3) or a double (4).
    mutating func attribute(_ field: Int, _ key: String, _ value: AttributeValue) {
        message(field) { keyValue in
            keyValue.string(1, key)
            keyValue.message(2) { any in
                switch value {
                case .string(let text): any.string(1, text)
                case .int(let number): any.varint(3, UInt64(bitPattern: number))
                case .double(let number): any.fixed64(4, number.bitPattern)
                }
            }
        }
    }

    private mutating func tag(_ field: Int, wireType: UInt64) {
        appendVarint(UInt64(field) << 3 | wireType)
    }

    private mutating func appendVarint(_ value: UInt64) {
        guard pass == .writing else {
            counted += Self.varintSize(value)
            return
        }
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    private mutating func appendBigEndian(_ word: UInt64) {
        guard pass == .writing else {
            counted += 8
            return
        }
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: word >> UInt64(shift))) }
    }

    private static func varintSize(_ value: UInt64) -> Int {
        // 7 bits a byte; 0 takes one byte.
        max(1, (64 - value.leadingZeroBitCount + 6) / 7)
    }
}
