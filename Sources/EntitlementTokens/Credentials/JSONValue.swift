/// A JSON value read whole, with every object's members in document order.
///
/// The SDK's other credentials (docs/DESIGN.md#the-sdks-other-credentials: a software statement's header and claims, user
/// metadata, a JWKS) are small documents read entirely, unlike a REST response,
/// so they are kept as a tree. The tree is built from the events of the one
/// strict `JSONScanner`, so these documents meet exactly the REST reader's
/// rules (RFC 8259 grammar, no raw controls, well-formed UTF-8, no leading
/// zeros, depth and string limits) plus the ones a tree needs: a member named
/// twice in one object is refused (never "last one wins": two readers would
/// see two documents), and the number of values is bounded.
///
/// Numbers keep their text as written, so a claim like `1.0e3` re-encodes as
/// it was signed; ``int64`` reads an integer claim exactly or not at all.
public indirect enum JSONValue: Sendable, Hashable {
    case object([JSONMember])
    case array([JSONValue])
    case string(String)
    /// The number exactly as written (it matched RFC 8259 §6).
    case number(String)
    case bool(Bool)
    case null

    /// The member named `name` of an object (names are compared byte for byte).
    public subscript(name: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.name.utf8.elementsEqual(name.utf8) }?.value
    }

    /// The string, when this is one.
    public var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// An integer number without fraction or exponent that fits in 64 bits; nil otherwise.
    public var int64: Int64? {
        guard case .number(let text) = self else { return nil }
        return Int64(text)
    }

    /// The members, when this is an object.
    public var members: [JSONMember]? {
        if case .object(let members) = self { return members }
        return nil
    }

    /// Compact JSON (no white space), members in order, strings escaped as
    /// RFC 8259 requires; numbers as written. Reading it back gives an equal value.
    public var encoded: [UInt8] {
        var writer = JSONWriter(capacity: 256)
        write(to: &writer)
        return writer.bytes
    }

    func write(to writer: inout JSONWriter) {
        switch self {
        case .object(let members):
            writer.beginObject()
            for member in members {
                writer.key(member.name)
                member.value.write(to: &writer)
            }
            writer.endObject()
        case .array(let elements):
            writer.beginArray()
            for element in elements {
                writer.element()
                element.write(to: &writer)
            }
            writer.endArray()
        case .string(let text):
            writer.string(text)
        case .number(let text):
            writer.raw(text)
        case .bool(let value):
            writer.bool(value)
        case .null:
            writer.null()
        }
    }
}

extension JSONValue {
    /// A scalar as the scanner reports it: its kind and its text (a string's
    /// unescaped, a number's as written). Every tree built from the scanner's
    /// events makes its scalars here.
    package init(_ kind: JSONScalar, text: [UInt8]) {
        switch kind {
        case .string: self = .string(String(decoding: text, as: UTF8.self))
        case .number: self = .number(String(decoding: text, as: UTF8.self))
        case .true: self = .bool(true)
        case .false: self = .bool(false)
        case .null: self = .null
        }
    }
}

/// One member of a JSON object.
public struct JSONMember: Sendable, Hashable {
    public var name: String
    public var value: JSONValue

    public init(name: String, value: JSONValue) {
        self.name = name
        self.value = value
    }
}

/// Limits for one JSON document read whole (docs/DESIGN.md#hostile-credentials).
public struct JSONDocumentLimits: Sendable, Hashable {
    /// Largest document, in bytes.
    public var maxBytes: Int = 256 * 1024
    /// Deepest nesting; the top-level object is depth 1.
    public var maxDepth: Int = 32
    /// Longest string or number, in bytes as written.
    public var maxStringBytes: Int = 64 * 1024
    /// Most values in the document (members and elements, nested ones included).
    public var maxValues: Int = 4096

    public init() {}

    /// The REST reader's limits for depth and strings, so both readers refuse alike.
    public init(configuration: DecoderConfiguration) {
        maxDepth = configuration.maxJSONDepth
        maxStringBytes = configuration.maxJSONStringBytes
        maxValues = configuration.maxJSONMembers
        maxBytes = max(configuration.maxRecordBytes, 64 * 1024)
    }
}

extension JSONValue {
    /// Reads one JSON document whose top level is an object (every credential document is one).
    ///
    /// - Throws: ``TokenError`` with `invalidJSON` (syntax, encoding, a top level
    ///   that is not an object), `ambiguousEnvelope` (a member named twice),
    ///   `jsonTooDeep` or `jsonLimitExceeded` (size, strings, value count). A UTF-8
    ///   byte order mark before `{` is skipped.
    public static func readObject(_ bytes: [UInt8], limits: JSONDocumentLimits = .init()) throws(TokenError) -> JSONValue {
        guard bytes.count <= limits.maxBytes else {
            throw TokenError(
                .jsonLimitExceeded,
                stage: .transport,
                "a JSON document of \(bytes.count) bytes, over the limit of \(limits.maxBytes)"
            )
        }
        var body = bytes[...]
        if ByteRules.startsWithByteOrderMark(body) { body = body.dropFirst(ByteRules.byteOrderMarkCount) }
        var scanner = JSONScanner(maxDepth: limits.maxDepth, maxStringBytes: limits.maxStringBytes)
        var builder = JSONTreeBuilder(maxValues: limits.maxValues, maxStringBytes: limits.maxStringBytes)
        let document = Array(body)
        scanner.scan(document.span, with: &builder)
        if let error = scanner.finish(with: &builder) { throw error }
        guard let root = builder.root else {
            throw TokenError(.invalidJSON, stage: .transport, "the JSON document is empty")
        }
        guard case .object = root else {
            throw TokenError(.invalidJSON, stage: .transport, "the JSON document is not an object")
        }
        return root
    }
}

/// Builds a ``JSONValue`` from the scanner's events.
private struct JSONTreeBuilder: JSONEventHandler {
    let maxValues: Int
    let maxStringBytes: Int

    private enum Frame {
        case object(members: [JSONMember], names: Set<[UInt8]>, pendingName: String?)
        case array([JSONValue])
    }

    private var frames: [Frame] = []
    private var values = 0
    private(set) var root: JSONValue?

    init(maxValues: Int, maxStringBytes: Int) {
        self.maxValues = maxValues
        self.maxStringBytes = maxStringBytes
    }

    mutating func valueStarts(_ kind: JSONValueKind, at position: JSONPosition) throws(TokenError) -> JSONCapture {
        values += 1
        guard values <= maxValues else {
            throw TokenError(
                .jsonLimitExceeded,
                stage: .transport,
                "a JSON document with more than \(maxValues) values (maxJSONMembers)",
                at: position.location
            )
        }
        switch kind {
        case .object: frames.append(.object(members: [], names: [], pendingName: nil))
        case .array: frames.append(.array([]))
        case .string, .number, .literal: break
        }
        return .keep(limit: maxStringBytes)
    }

    mutating func keyStarts() -> Bool { true }

    mutating func key(_ bytes: [UInt8], at position: JSONPosition) throws(TokenError) {
        guard case .object(let members, var names, _) = frames.last else { return }
        guard names.insert(bytes).inserted else {
            throw TokenError(
                .ambiguousEnvelope,
                stage: .transport,
                "the member '\(String(decoding: bytes, as: UTF8.self))' appears twice in one object; "
                    + "readers disagree on which one counts, so neither is used",
                at: position.location
            )
        }
        frames[frames.count - 1] = .object(
            members: members,
            names: names,
            pendingName: String(decoding: bytes, as: UTF8.self)
        )
    }

    mutating func scalar(_ kind: JSONScalar, text: [UInt8]) throws(TokenError) {
        add(JSONValue(kind, text: text))
    }

    mutating func containerEnds() throws(TokenError) {
        guard let frame = frames.popLast() else { return }
        switch frame {
        case .object(let members, _, _): add(.object(members))
        case .array(let elements): add(.array(elements))
        }
    }

    private mutating func add(_ value: JSONValue) {
        guard let frame = frames.popLast() else {
            root = value
            return
        }
        switch frame {
        case .object(var members, let names, let pendingName):
            // The scanner reports a member's name before its value, always.
            members.append(JSONMember(name: pendingName ?? "", value: value))
            frames.append(.object(members: members, names: names, pendingName: nil))
        case .array(var elements):
            elements.append(value)
            frames.append(.array(elements))
        }
    }
}
