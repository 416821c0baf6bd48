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

    /// One span as `ScopeSpans.spans` (field 2) carries it: what the export
    /// queue holds. A span is encoded once, when its request ends, so the
    /// queue keeps bytes rather than the decision's strings.
    static func encodedSpan(_ span: DecisionSpan) -> [UInt8] {
        let length = spanLength(span)
        return Protobuf.encode(length: Protobuf.fieldSize(2, length: length)) { writer in
            writer.protobufLengthPrefix(2, length)
            write(span, into: &writer)
        }
    }

    /// The request around spans already encoded by ``encodedSpan(_:)``, one after another.
    static func encode(encodedSpans spans: [UInt8], service: Service) -> [UInt8] {
        head(ofSpansLength: spans.count, service: service) + spans
    }

    /// What comes before `length` bytes of encoded spans in the request: the
    /// export sends it and the batch's bytes as they are, one after the other.
    static func head(ofSpansLength length: Int, service: Service) -> [UInt8] {
        typealias Size = Protobuf
        let resource =
            Size.attributeSize(1, "service.name", .string(service.name))
            + Size.attributeSize(1, "service.version", .string(service.version))
            + Size.attributeSize(1, "service.instance.id", .string(service.instance))
        let scope = Size.fieldSize(1, length: "tokengate".utf8.count) + Size.fieldSize(2, length: service.version.utf8.count)
        let scopeSpans = Size.fieldSize(1, length: scope) + length
        let resourceSpans = Size.fieldSize(1, length: resource) + Size.fieldSize(2, length: scopeSpans)
        return Protobuf.encode(length: Size.fieldSize(1, length: resourceSpans) - length) { writer in
            // ExportTraceServiceRequest.resource_spans = 1
            writer.protobufLengthPrefix(1, resourceSpans)
            // ResourceSpans.resource = 1
            writer.protobufLengthPrefix(1, resource)
            writer.protobufAttribute(1, "service.name", .string(service.name))
            writer.protobufAttribute(1, "service.version", .string(service.version))
            writer.protobufAttribute(1, "service.instance.id", .string(service.instance))
            // ResourceSpans.scope_spans = 2
            writer.protobufLengthPrefix(2, scopeSpans)
            // ScopeSpans.scope = 1: InstrumentationScope name = 1, version = 2
            writer.protobufLengthPrefix(1, scope)
            writer.protobufString(1, "tokengate")
            writer.protobufString(2, service.version)
            // ScopeSpans.spans = 2 follow, each already with its tag and length.
        }
    }

    /// `spans` encoded and wrapped as one request.
    static func encode(_ spans: some Collection<DecisionSpan>, service: Service) -> [UInt8] {
        encode(encodedSpans: spans.flatMap(encodedSpan), service: service)
    }

    /// Span: trace_id 1, span_id 2, trace_state 3, parent_span_id 4, name 5,
    /// kind 6, start 7, end 8, attributes 9, status 15, flags 16. The length
    /// is summed from the same fields ``write(_:into:)`` writes, in the same order.
    private static func spanLength(_ span: DecisionSpan) -> Int {
        typealias Size = Protobuf
        let decision = span.decision
        var length = Size.fieldSize(1, length: 16) + Size.fieldSize(2, length: 8)
        if let state = span.identity.traceState { length += Size.fieldSize(3, length: state.utf8.count) }
        if span.identity.parentSpanID != nil { length += Size.fieldSize(4, length: 8) }
        length += Size.fieldSize(5, length: decision.method.utf8.count + 1 + decision.route.utf8.count)
        length += Size.varintFieldSize(6, 2) + Size.fixedFieldSize(7, bytes: 8) + Size.fixedFieldSize(8, bytes: 8)
        forEachAttribute(of: span) { key, value in length += Size.attributeSize(9, key, value) }
        if span.httpStatus >= 500 { length += Size.fieldSize(15, length: statusLength(span)) }
        return length + Size.fixedFieldSize(16, bytes: 4)
    }

    private static func write(_ span: DecisionSpan, into writer: inout OutputSpan<UInt8>) {
        writer.protobufID(1, span.identity.traceID)
        writer.protobufID(2, span.identity.spanID)
        if let state = span.identity.traceState { writer.protobufString(3, state) }
        if let parent = span.identity.parentSpanID { writer.protobufID(4, parent) }
        // The name, `GET /v1/auth-request`: the method and the route, as
        // OpenTelemetry's HTTP conventions name a server span.
        writer.protobufString(5, span.decision.method, " ", span.decision.route)
        writer.protobufVarint(6, 2)  // SPAN_KIND_SERVER
        writer.protobufFixed64(7, span.startUnixNanoseconds)
        writer.protobufFixed64(8, span.endUnixNanoseconds)
        forEachAttribute(of: span) { key, value in writer.protobufAttribute(9, key, value) }
        // Status: message 2, code 3. A server span is an error for a 5xx only
        // (OpenTelemetry's HTTP conventions): a refused token is an answer.
        if span.httpStatus >= 500 {
            writer.protobufLengthPrefix(15, statusLength(span))
            writer.protobufString(2, span.decision.reason)
            writer.protobufVarint(3, 2)  // STATUS_CODE_ERROR
        }
        // The W3C flags in the low byte; 0x100: whether the parent is remote is known, 0x200: it is.
        writer.protobufFixed32(16, UInt32(span.identity.flags) | 0x100 | (span.identity.parentSpanID == nil ? 0 : 0x200))
    }

    /// A 5xx span's `Status`: the reason as its message (2), code ERROR (3).
    private static func statusLength(_ span: DecisionSpan) -> Int {
        Protobuf.fieldSize(2, length: span.decision.reason.utf8.count) + Protobuf.varintFieldSize(3, 2)
    }

    /// The span's attributes, in order: what its length counts and its writing writes.
    private static func forEachAttribute(
        of span: DecisionSpan,
        _ body: (String, Protobuf.AttributeValue) -> Void
    ) {
        let decision = span.decision
        body("http.request.method", .string(decision.method))
        body("http.route", .string(decision.route))
        body("http.response.status_code", .int(Int64(span.httpStatus)))
        body("tokengate.status", .string(decision.status))
        body("tokengate.reason", .string(decision.reason))
        body("tokengate.kind", .string(decision.kind))
        if let resource = decision.resource { body("tokengate.resource", .string(resource)) }
        if let tokenID = decision.tokenID { body("tokengate.token_id", .string(tokenID)) }
        if let profile = decision.profile { body("tokengate.cdn_profile", .string(profile)) }
        if let store = span.storeNanoseconds { body("tokengate.replay_store.duration", .double(Double(store) / 1e9)) }
    }
}

/// The protobuf wire format, as much of it as the OTLP request needs,
/// written in one pass into an array of the exact size.
///
/// A nested message is written length first, so its length is summed before
/// it is written: the `…Size` functions give what each field takes, and the
/// message's writer sums the same fields it then writes (`OTLPTraceRequest`).
/// Nothing is written apart and copied into its parent, and the bytes go
/// straight into the array's storage, without an array's checks a byte.
enum Protobuf {
    enum AttributeValue {
        case string(String)
        case int(Int64)
        case double(Double)
    }

    /// The `length` bytes `write` writes. A `write` that writes more than
    /// `length` stops the process (the output's bound is checked at every
    /// byte), so every message's length is summed from the fields its writer
    /// writes, and every shape of span is written in the tests.
    static func encode(length: Int, _ write: (inout OutputSpan<UInt8>) -> Void) -> [UInt8] {
        let bytes = [UInt8](capacity: length, initializingWith: write)
        assert(bytes.count == length)
        return bytes
    }

    static func varintSize(_ value: UInt64) -> Int {
        // 7 bits a byte; 0 takes one byte.
        max(1, (64 - value.leadingZeroBitCount + 6) / 7)
    }

    static func tagSize(_ field: Int) -> Int { varintSize(UInt64(field) << 3) }

    /// A length-delimited field (a string, bytes or a nested message) of `length` bytes.
    static func fieldSize(_ field: Int, length: Int) -> Int {
        tagSize(field) + varintSize(UInt64(length)) + length
    }

    static func varintFieldSize(_ field: Int, _ value: UInt64) -> Int { tagSize(field) + varintSize(value) }

    static func fixedFieldSize(_ field: Int, bytes: Int) -> Int { tagSize(field) + bytes }

    /// A `KeyValue` field, with its `AnyValue`.
    static func attributeSize(_ field: Int, _ key: String, _ value: AttributeValue) -> Int {
        fieldSize(field, length: keyValueLength(key, value))
    }

    fileprivate static func keyValueLength(_ key: String, _ value: AttributeValue) -> Int {
        fieldSize(1, length: key.utf8.count) + fieldSize(2, length: anyValueLength(value))
    }

    fileprivate static func anyValueLength(_ value: AttributeValue) -> Int {
        switch value {
        case .string(let text): fieldSize(1, length: text.utf8.count)
        case .int(let number): varintFieldSize(3, UInt64(bitPattern: number))
        case .double: fixedFieldSize(4, bytes: 8)
        }
    }
}

/// Protobuf's fields written into the output of ``Protobuf/encode(length:_:)``,
/// each named for the wire format so it does not read as a span's own method.
extension OutputSpan<UInt8> {
    /// A length-delimited field's tag and length; its `length` bytes follow.
    fileprivate mutating func protobufLengthPrefix(_ field: Int, _ length: Int) {
        protobufTag(field, wireType: 2)
        protobufVarintBytes(UInt64(length))
    }

    fileprivate mutating func protobufVarint(_ field: Int, _ value: UInt64) {
        protobufTag(field, wireType: 0)
        protobufVarintBytes(value)
    }

    fileprivate mutating func protobufFixed64(_ field: Int, _ value: UInt64) {
        protobufTag(field, wireType: 1)
        for shift in stride(from: 0, to: 64, by: 8) { append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    fileprivate mutating func protobufFixed32(_ field: Int, _ value: UInt32) {
        protobufTag(field, wireType: 5)
        for shift in stride(from: 0, to: 32, by: 8) { append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }

    /// A span id: 8 bytes, big-endian.
    fileprivate mutating func protobufID(_ field: Int, _ word: UInt64) {
        protobufLengthPrefix(field, 8)
        protobufBigEndian(word)
    }

    /// A trace id: 16 bytes, big-endian.
    fileprivate mutating func protobufID(_ field: Int, _ traceID: TraceID) {
        protobufLengthPrefix(field, 16)
        protobufBigEndian(traceID.high)
        protobufBigEndian(traceID.low)
    }

    fileprivate mutating func protobufString(_ field: Int, _ value: String) {
        protobufLengthPrefix(field, value.utf8.count)
        protobufBytes(value.utf8.span)
    }

    /// A string field of three parts, written as one: `first`, `separator`, `last`.
    fileprivate mutating func protobufString(_ field: Int, _ first: String, _ separator: Unicode.Scalar, _ last: String) {
        protobufLengthPrefix(field, first.utf8.count + 1 + last.utf8.count)
        protobufBytes(first.utf8.span)
        append(UInt8(ascii: separator))
        protobufBytes(last.utf8.span)
    }

    /// A `KeyValue` (key 1, value 2) whose `AnyValue` holds a string (1), an int (3) or a double (4).
    fileprivate mutating func protobufAttribute(_ field: Int, _ key: String, _ value: Protobuf.AttributeValue) {
        protobufLengthPrefix(field, Protobuf.keyValueLength(key, value))
        protobufString(1, key)
        protobufLengthPrefix(2, Protobuf.anyValueLength(value))
        switch value {
        case .string(let text): protobufString(1, text)
        case .int(let number): protobufVarint(3, UInt64(bitPattern: number))
        case .double(let number): protobufFixed64(4, number.bitPattern)
        }
    }

    private mutating func protobufBytes(_ bytes: Span<UInt8>) {
        for index in bytes.indices { append(bytes[index]) }
    }

    private mutating func protobufTag(_ field: Int, wireType: UInt64) {
        protobufVarintBytes(UInt64(field) << 3 | wireType)
    }

    private mutating func protobufVarintBytes(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        append(UInt8(rest))
    }

    private mutating func protobufBigEndian(_ word: UInt64) {
        for shift in stride(from: 56, through: 0, by: -8) { append(UInt8(truncatingIfNeeded: word >> UInt64(shift))) }
    }
}
