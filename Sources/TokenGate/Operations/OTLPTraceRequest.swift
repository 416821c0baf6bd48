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
        var request = ProtobufWriter()
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
        return request.bytes
    }

    /// Span: trace_id 1, span_id 2, trace_state 3, parent_span_id 4, name 5,
    /// kind 6, start 7, end 8, attributes 9, status 15, flags 16.
    private static func encode(_ span: DecisionSpan, into writer: inout ProtobufWriter) {
        writer.bytes(1, span.identity.traceID)
        writer.bytes(2, span.identity.spanID)
        if let state = span.identity.traceState { writer.string(3, state) }
        if let parent = span.identity.parentSpanID { writer.bytes(4, parent) }
        writer.string(5, span.name)
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
struct ProtobufWriter {
    private(set) var bytes: [UInt8] = []

    enum AttributeValue {
        case string(String)
        case int(Int64)
        case double(Double)
    }

    mutating func varint(_ field: Int, _ value: UInt64) {
        tag(field, wireType: 0)
        appendVarint(value)
    }

    mutating func fixed64(_ field: Int, _ value: UInt64) {
        tag(field, wireType: 1)
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    mutating func fixed32(_ field: Int, _ value: UInt32) {
        tag(field, wireType: 5)
        for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }

    mutating func bytes(_ field: Int, _ value: [UInt8]) {
        tag(field, wireType: 2)
        appendVarint(UInt64(value.count))
        bytes += value
    }

    mutating func string(_ field: Int, _ value: String) {
        tag(field, wireType: 2)
        appendVarint(UInt64(value.utf8.count))
        bytes += value.utf8
    }

    /// A nested message, length first (so it is written apart, then copied).
    mutating func message(_ field: Int, _ body: (inout ProtobufWriter) -> Void) {
        var nested = ProtobufWriter()
        body(&nested)
        bytes(field, nested.bytes)
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
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }
}
