/// Unwraps a REST JSON response into one record per token (docs/DESIGN.md#transport-forms),
/// reading it as it streams in.
///
/// v1: `{"serializedToken": "…", "expires": "…", …}` — one token.
/// v2: `{"decisions": [{"resource": …, "token": {"serializedToken": …, "notBefore": …, "notAfter": …}}]}`
/// — one token per decision. A decision without a token (a denial) becomes an
/// error record, so it is reported rather than silently dropped.
///
/// Only the members the envelope uses are kept: the document's own scalars (v1),
/// each decision's and its token's scalars, and a denial's error message (v2).
/// Everything else is checked by the ``JSONScanner`` and forgotten. An
/// envelope that could be read two ways is refused, never resolved by picking
/// one: a member named twice in an object the envelope reads, or REST v1 and v2
/// members in one document.
struct RESTDocument {
    /// One record's worth: a token, or why there is none, and where it starts.
    struct Entry {
        var token: [UInt8]?
        var envelope: RESTEnvelope?
        var error: TokenError?
        var position: JSONPosition
    }

    private var scanner: JSONScanner
    private var reader: EnvelopeReader
    private let start: JSONPosition

    init(configuration: DecoderConfiguration, startingAt start: JSONPosition) {
        scanner = JSONScanner(
            maxDepth: configuration.maxJSONDepth,
            maxStringBytes: configuration.maxJSONStringBytes,
            startingAt: start
        )
        reader = EnvelopeReader(configuration: configuration)
        self.start = start
    }

    /// Bytes held between calls: the string being read, the open containers and
    /// what the envelope kept (for the flat-memory tests).
    var retainedBytes: Int { scanner.retainedBytes + reader.retainedBytes }

    /// True once the document is known to be refused; later bytes need not be fed.
    var hasFailed: Bool { scanner.error != nil }

    mutating func feed(_ bytes: Span<UInt8>) {
        scanner.scan(bytes, with: &reader)
    }

    /// Ends the document; returns its records in order.
    mutating func finish() -> [Entry] {
        // A document that is not JSON is reported as such, whatever its envelope said before.
        if let error = scanner.finish(with: &reader) {
            return [Entry(error: error, position: start)]
        }
        if let problem = reader.problem {
            return [Entry(error: problem, position: start)]
        }
        return reader.entries(documentStart: start)
    }

    /// The whole document in one piece (a one-line document, and tests).
    static func entries(
        from document: [UInt8],
        configuration: DecoderConfiguration = .default,
        startingAt start: JSONPosition = JSONPosition(offset: 0, line: 1, column: 1)
    ) -> [Entry] {
        var reader = RESTDocument(configuration: configuration, startingAt: start)
        reader.feed(document.span)
        return reader.finish()
    }
}

/// The REST meaning of the scanner's events: which members are the envelope,
/// which string is a token, and which documents are ambiguous.
private struct EnvelopeReader: JSONEventHandler {
    /// The answer for a container whose members are read.
    private static let read = JSONCapture.keep(limit: 0)

    /// The objects and arrays whose members are read; anything else is skipped whole
    /// (the scanner reports nothing inside a value answered with `.skip`).
    private enum Frame { case root, decisions, decision, token, error }

    /// Where the scalar being read goes.
    private enum Target {
        case none, v1Token
        case rootField(String)
        case decisionField(String)
        case tokenField(String)
        case errorField(String)
        case decisionToken
    }

    private struct Decision {
        var number: Int
        var position: JSONPosition
        var fields: [(key: String, value: RESTEnvelope.Value)] = []
        var tokenFields: [(key: String, value: RESTEnvelope.Value)] = []
        var errorFields: [(key: String, value: RESTEnvelope.Value)] = []
        var token: [UInt8]?
        var problem: String?
    }

    let configuration: DecoderConfiguration
    private var frames: [Frame] = []
    /// The member names seen in each open object of `frames` (arrays hold an empty set),
    /// as bytes: names are compared exactly, never by Unicode equivalence.
    private var names: [Set<[UInt8]>] = []
    private var memberName: String?
    private var target = Target.none
    private var kept = 0

    private var v1Token: [UInt8]?
    private var rootFields: [(key: String, value: RESTEnvelope.Value)] = []
    /// Whether the document has a `serializedToken` (v1) or a `decisions` (v2)
    /// member, whatever its type: both together are ambiguous.
    private var sawV1Token = false
    private var sawDecisions = false
    private var decisions: [Decision] = []
    private var current: Decision?

    init(configuration: DecoderConfiguration) {
        self.configuration = configuration
    }

    var retainedBytes: Int {
        func size(_ fields: [(key: String, value: RESTEnvelope.Value)]) -> Int {
            fields.reduce(0) { $0 + $1.key.utf8.count + $1.value.description.utf8.count }
        }
        var total = (v1Token?.count ?? 0) + size(rootFields) + names.reduce(0) { $0 + $1.reduce(0) { $0 + $1.count } }
        for decision in decisions + (current.map { [$0] } ?? []) {
            total += (decision.token?.count ?? 0) + size(decision.fields) + size(decision.tokenFields) + size(decision.errorFields)
        }
        return total
    }

    /// Why the envelope gives no token, if it does not. An ambiguity outranks a
    /// missing token: `{"serializedToken": 5, "serializedToken": "PHN…"}` is read
    /// two ways (a last-wins reader finds a token), so reading goes on past a
    /// missing token, and only an ambiguity stops it. The scan itself always goes
    /// on, because a document that is not JSON at all must say so (the syntax
    /// error wins over both).
    var problem: TokenError? { ambiguity ?? missingToken }
    private var ambiguity: TokenError?
    private var missingToken: TokenError?

    mutating func valueStarts(_ kind: JSONValueKind, at position: JSONPosition) throws(TokenError) -> JSONCapture {
        guard ambiguity == nil else { return .skip }
        do {
            return try read(kind, at: position)
        } catch {
            try setAside(error)
            return .skip
        }
    }

    mutating func keyStarts() -> Bool {
        guard ambiguity == nil, let frame = frames.last else { return false }
        return frame != .decisions
    }

    mutating func key(_ bytes: [UInt8], at position: JSONPosition) throws(TokenError) {
        guard ambiguity == nil else { return }
        do {
            try readKey(bytes, at: position)
        } catch {
            try setAside(error)
        }
    }

    /// Limits and the top-level value end the scan at once; the envelope's own
    /// problems wait for the end of the document.
    private mutating func setAside(_ error: TokenError) throws(TokenError) {
        switch error.code {
        case .ambiguousEnvelope: ambiguity = error
        case .jsonWithoutToken: missingToken = missingToken ?? error
        default: throw error
        }
    }

    private mutating func read(_ kind: JSONValueKind, at position: JSONPosition) throws(TokenError) -> JSONCapture {
        guard let frame = frames.last else {
            guard kind == .object else {
                throw TokenError(
                    .invalidJSON,
                    stage: .transport,
                    "the JSON document is \(kind == .array ? "an array" : "not an object"); a REST response is an object: {\"serializedToken\": …} (v1) or {\"decisions\": […]} (v2)",
                    at: position.location
                )
            }
            open(.root)
            return Self.read
        }
        let name = memberName ?? ""
        memberName = nil
        switch frame {
        case .root:
            if name == "serializedToken" {
                if sawDecisions { throw Self.mixedVersions(at: position) }
                sawV1Token = true
                guard kind == .string else {
                    throw TokenError(.jsonWithoutToken, stage: .transport, "serializedToken is not a string", at: position.location)
                }
                target = .v1Token
                return .keep(limit: configuration.maxRecordBytes)
            }
            if name == "decisions" {
                if sawV1Token { throw Self.mixedVersions(at: position) }
                sawDecisions = true
                guard kind == .array else {
                    throw TokenError(.jsonWithoutToken, stage: .transport, "decisions is not an array", at: position.location)
                }
                open(.decisions)
                return Self.read
            }
            return field(kind, into: .rootField(name))
        case .decisions:
            try count()
            let number = decisions.count + 1
            guard kind == .object else {
                decisions.append(Decision(number: number, position: position, problem: "decision \(number) is not an object"))
                return .skip
            }
            current = Decision(number: number, position: position)
            open(.decision)
            return Self.read
        case .decision:
            if name == "token", kind == .object {
                open(.token)
                return Self.read
            }
            if name == "error", kind == .object {
                open(.error)
                return Self.read
            }
            return field(kind, into: .decisionField(name))
        case .token:
            if name == "serializedToken" {
                guard kind == .string else {
                    let number = current?.number ?? 0
                    current?.problem = "decision \(number): serializedToken is not a string"
                    return .skip
                }
                target = .decisionToken
                return .keep(limit: configuration.maxRecordBytes)
            }
            return field(kind, into: .tokenField(name))
        case .error:
            return field(kind, into: .errorField(name))
        }
    }

    private mutating func readKey(_ bytes: [UInt8], at position: JSONPosition) throws(TokenError) {
        try count()
        let name = String(decoding: bytes, as: UTF8.self)
        guard names[names.count - 1].insert(bytes).inserted else {
            let place =
                switch frames.last! {
                case .root: "the document"
                case .decision: "decision \(current?.number ?? 0)"
                case .token: "the token of decision \(current?.number ?? 0)"
                case .error, .decisions: "the error of decision \(current?.number ?? 0)"
                }
            throw TokenError(
                .ambiguousEnvelope,
                stage: .transport,
                "member '\(name)' appears twice in \(place): the envelope could be read two ways",
                at: position.location
            )
        }
        memberName = name
    }

    mutating func scalar(_ kind: JSONScalar, text: [UInt8]) throws(TokenError) {
        defer { target = .none }
        guard problem == nil else { return }  // a refused envelope keeps no values
        let value: RESTEnvelope.Value
        switch kind {
        case .string: value = .string(String(decoding: text, as: UTF8.self))
        case .number: value = .number(String(decoding: text, as: UTF8.self))
        case .true: value = .bool(true)
        case .false: value = .bool(false)
        case .null: value = .null
        }
        switch target {
        case .none: break
        case .v1Token: v1Token = text
        case .decisionToken: current?.token = text
        case .rootField(let name): rootFields.append((name, value))
        case .decisionField(let name): current?.fields.append((name, value))
        case .tokenField(let name): current?.tokenFields.append((name, value))
        case .errorField(let name): current?.errorFields.append((name, value))
        }
    }

    mutating func containerEnds() throws(TokenError) {
        guard ambiguity == nil else { return }
        let frame = frames.removeLast()
        names.removeLast()
        if frame == .decision, let current {
            decisions.append(current)
            self.current = nil
        }
    }

    // MARK: -

    private mutating func open(_ frame: Frame) {
        frames.append(frame)
        names.append([])
    }

    /// A scalar is kept as an envelope field; a container is skipped.
    private mutating func field(_ kind: JSONValueKind, into fieldTarget: Target) -> JSONCapture {
        if kind == .object || kind == .array { return .skip }
        target = fieldTarget
        return .keep(limit: configuration.maxJSONStringBytes)
    }

    /// Counts a member name of an object that is read, or a decision: each is kept.
    private mutating func count() throws(TokenError) {
        kept += 1
        guard kept <= configuration.maxJSONMembers else {
            throw TokenError(
                .jsonLimitExceeded,
                stage: .transport,
                "the REST envelope has more than \(configuration.maxJSONMembers) members and decisions (maxJSONMembers)"
            )
        }
    }

    private static func mixedVersions(at position: JSONPosition) -> TokenError {
        TokenError(
            .ambiguousEnvelope,
            stage: .transport,
            "the document has both serializedToken (REST v1) and decisions (REST v2): the envelope could be read two ways",
            at: position.location
        )
    }

    /// The records of a complete document.
    func entries(documentStart: JSONPosition) -> [RESTDocument.Entry] {
        if let v1Token {
            let fields = rootFields.sorted { $0.key < $1.key }
            return [RESTDocument.Entry(token: v1Token, envelope: RESTEnvelope(version: .restV1, fields: fields), position: documentStart)]
        }
        guard sawDecisions else {
            return [
                RESTDocument.Entry(
                    error: TokenError(
                        .jsonWithoutToken,
                        stage: .transport,
                        "the JSON document has neither 'serializedToken' (REST v1) nor 'decisions' (REST v2)"
                    ),
                    position: documentStart
                )
            ]
        }
        guard !decisions.isEmpty else {
            return [
                RESTDocument.Entry(
                    error: TokenError(.jsonWithoutToken, stage: .transport, "the REST v2 document has no decisions"),
                    position: documentStart
                )
            ]
        }
        return decisions.map(Self.entry)
    }

    private static func entry(_ decision: Decision) -> RESTDocument.Entry {
        if let problem = decision.problem {
            return RESTDocument.Entry(
                error: TokenError(.jsonWithoutToken, stage: .transport, problem, at: decision.position.location),
                position: decision.position
            )
        }
        let envelope = RESTEnvelope(version: .restV2, fields: (decision.fields + decision.tokenFields).sorted { $0.key < $1.key })
        if let token = decision.token {
            return RESTDocument.Entry(token: token, envelope: envelope, position: decision.position)
        }
        func text(_ fields: [(key: String, value: RESTEnvelope.Value)], _ name: String) -> String? {
            guard let value = fields.first(where: { $0.key == name })?.value, value != .null else { return nil }
            return value.description
        }
        let resource = text(decision.fields, "resource").map { " for resource '\($0)'" } ?? ""
        var detail = text(decision.fields, "authorized").map { " (authorized: \($0))" } ?? ""
        if let message = text(decision.errorFields, "details") ?? text(decision.errorFields, "message") ?? text(decision.errorFields, "code") {
            detail += ": \(message)"
        }
        return RESTDocument.Entry(
            envelope: envelope,
            error: TokenError(
                .jsonWithoutToken,
                stage: .transport,
                "decision \(decision.number)\(resource) carries no token\(detail)",
                at: decision.position.location
            ),
            position: decision.position
        )
    }
}
