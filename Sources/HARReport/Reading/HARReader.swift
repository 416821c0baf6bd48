import EntitlementTokens

/// Why a file is not a HAR that can be read: not JSON by the strict rules, no
/// `log.entries`, a member named twice. Its location is a byte offset and line:column.
package struct HARReadError: Error, Sendable, CustomStringConvertible {
    package var message: String
    package var location: SourceLocation?

    package var description: String {
        guard let location else { return message }
        return "\(location): \(message)"
    }
}

/// Reads a HAR streamed: `feed(_:)` chunks of any size, then `finish()`, and
/// each entry of `log.entries` is handed over as soon as its closing brace is
/// read (docs/DESIGN.md#reading-a-capture).
///
/// Why streamed: a capture of a stream holds every segment's body as Base64,
/// a gigabyte and more, and a tool that reads it whole (Python's `json.load`,
/// haralyzer) needs several times that in memory. Here the one strict JSON
/// scanner of the library reads the document, everything outside
/// `log.entries` is validated and forgotten, and an entry is kept only until it
/// is handed over, within ``HARLimits``: a string over its limit (a large body)
/// is skipped and said so, never refused, so the rest of the capture is read.
/// The document must still be JSON by the strict rules, with no member named
/// twice (two readers would see two captures).
package struct HARReader {
    package let limits: HARLimits
    private var scanner: JSONScanner
    private var handler: DocumentHandler

    package init(limits: HARLimits = HARLimits()) {
        self.limits = limits
        scanner = JSONScanner(maxDepth: limits.maxDepth, maxStringBytes: limits.maxSkippedStringBytes, maxKeyBytes: limits.maxNameBytes)
        handler = DocumentHandler(limits: limits)
    }

    /// Entries seen in `log.entries`, read or not.
    package var entriesSeen: Int { handler.entryCount }
    /// What was skipped outside any one entry (entries over the limit).
    package var notes: [String] { handler.notes }

    /// Reads the next chunk, handing over each entry completed in it.
    package mutating func feed(_ bytes: Span<UInt8>, each body: (HAREntry) throws -> Void) throws {
        scanner.scan(bytes, with: &handler)
        try drain(body)
        if let error = scanner.error { throw Self.failure(error) }
    }

    /// Ends the document: it must be complete and have held `log.entries`.
    package mutating func finish(each body: (HAREntry) throws -> Void) throws {
        let error = scanner.finish(with: &handler)
        try drain(body)
        if let error { throw Self.failure(error) }
        guard handler.sawEntries else {
            throw HARReadError(message: handler.sawLog ? "the HAR's log has no entries array" : "not a HAR: the JSON object has no 'log' member")
        }
    }

    private mutating func drain(_ body: (HAREntry) throws -> Void) throws {
        guard !handler.ready.isEmpty else { return }
        let ready = handler.ready
        handler.ready.removeAll(keepingCapacity: true)
        for entry in ready { try body(entry) }
    }

    private static func failure(_ error: TokenError) -> HARReadError {
        HARReadError(message: error.message, location: error.location)
    }

    /// True when `bytes` (the start of a file) look like a HAR: a JSON object
    /// whose first member is `log`, as every HAR writer puts it. Used to send a
    /// HAR given to a command that reads tokens to the command that reads captures.
    package static func looksLikeHAR(_ bytes: some Collection<UInt8>) -> Bool {
        var index = bytes.startIndex
        func skipSpace() {
            while index != bytes.endIndex, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index = bytes.index(after: index) }
        }
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = bytes.index(index, offsetBy: 3) }
        skipSpace()
        guard index != bytes.endIndex, bytes[index] == UInt8(ascii: "{") else { return false }
        index = bytes.index(after: index)
        skipSpace()
        return bytes[index...].starts(with: Array("\"log\"".utf8))
    }
}

/// Follows the document down to `log.entries` and builds each entry.
private struct DocumentHandler: JSONEventHandler {
    let limits: HARLimits

    private enum Stage {
        case start, root, log, entries, entry, done
    }

    private var stage = Stage.start
    private var rootNames: Set<[UInt8]> = []
    private var logNames: Set<[UInt8]> = []
    private var pendingName: [UInt8] = []
    private var builder: EntryBuilder?
    private(set) var sawLog = false
    private(set) var sawEntries = false
    private(set) var entryCount = 0
    var ready: [HAREntry] = []
    private(set) var notes: [String] = []

    init(limits: HARLimits) {
        self.limits = limits
    }

    mutating func valueStarts(_ kind: JSONValueKind, at position: JSONPosition) throws(TokenError) -> JSONCapture {
        switch stage {
        case .start:
            guard kind == .object else { throw refusal("not a HAR: the document is not a JSON object", at: position) }
            stage = .root
            return .keep(limit: 0)
        case .root:
            guard pendingName == Self.log else { return .skip }
            guard kind == .object else { throw refusal("not a HAR: 'log' is not an object", at: position) }
            sawLog = true
            stage = .log
            return .keep(limit: 0)
        case .log:
            guard pendingName == Self.entries else { return .skip }
            guard kind == .array else { throw refusal("not a HAR: 'log.entries' is not an array", at: position) }
            sawEntries = true
            stage = .entries
            return .keep(limit: 0)
        case .entries:
            entryCount += 1
            guard kind == .object else {
                note("entry #\(entryCount) is not an object and was not read")
                return .skip
            }
            guard entryCount <= limits.maxEntries else {
                if entryCount == limits.maxEntries + 1 { note("entries after #\(limits.maxEntries) were not read (the limit of entries)") }
                return .skip
            }
            builder = EntryBuilder(limits: limits)
            stage = .entry
            return builder!.valueStarts(kind)
        case .entry:
            return builder!.valueStarts(kind)
        case .done:
            return .skip
        }
    }

    mutating func keyStarts() -> Bool {
        switch stage {
        case .root, .log: true
        case .entry: builder!.keyStarts()
        case .start, .entries, .done: false
        }
    }

    mutating func key(_ bytes: [UInt8], at position: JSONPosition) throws(TokenError) {
        switch stage {
        case .root:
            guard rootNames.insert(bytes).inserted else { throw twice(bytes, at: position) }
            pendingName = bytes
        case .log:
            guard logNames.insert(bytes).inserted else { throw twice(bytes, at: position) }
            pendingName = bytes
        case .entry:
            guard builder!.key(bytes) else { throw twice(bytes, at: position) }
        case .start, .entries, .done:
            break
        }
    }

    mutating func scalar(_ kind: JSONScalar, text: [UInt8]) throws(TokenError) {
        if stage == .entry { builder!.scalar(kind, text: text) }
    }

    mutating func stringOverLimit(byteCount: Int) throws(TokenError) {
        if stage == .entry { builder!.overLimit(byteCount: byteCount) }
    }

    mutating func containerEnds() throws(TokenError) {
        switch stage {
        case .entry:
            guard let done = builder!.containerEnds() else { return }
            ready.append(HAREntry(number: entryCount, value: done.value, skipped: done.skipped, limits: limits))
            builder = nil
            stage = .entries
        case .entries:
            stage = .log
            pendingName = []
        case .log:
            stage = .root
            pendingName = []
        case .root:
            stage = .done
        case .start, .done:
            break
        }
    }

    private mutating func note(_ text: String) {
        if notes.count < limits.maxNotes { notes.append(text) }
    }

    private static let log = Array("log".utf8)
    private static let entries = Array("entries".utf8)

    private func refusal(_ message: String, at position: JSONPosition) -> TokenError {
        TokenError(.invalidJSON, stage: .transport, message, at: position.location)
    }

    private func twice(_ name: [UInt8], at position: JSONPosition) -> TokenError {
        TokenError(
            .ambiguousEnvelope,
            stage: .transport,
            "the member '\(String(decoding: name, as: UTF8.self))' appears twice in one object; readers disagree on which one counts",
            at: position.location
        )
    }
}

/// Builds one entry's tree within the limits: a string over its limit becomes
/// `null` and a note; past the value limit the rest of the entry is skipped.
private struct EntryBuilder {
    let limits: HARLimits

    private enum Frame {
        case object(members: [JSONMember], names: Set<[UInt8]>, pending: String)
        case array([JSONValue])
    }

    private var frames: [Frame] = []
    private var values = 0
    private var overflowed = false
    private var skipped: [String] = []
    /// The member name of the value being read, for the notes and the body limit.
    private var currentName = ""

    init(limits: HARLimits) {
        self.limits = limits
    }

    mutating func valueStarts(_ kind: JSONValueKind) -> JSONCapture {
        if overflowed { return .skip }
        values += 1
        if values > limits.maxValuesPerEntry {
            overflowed = true
            skipped.append("the entry holds more than \(limits.maxValuesPerEntry) values: the rest of it was not read")
            return .skip
        }
        switch kind {
        case .object:
            frames.append(.object(members: [], names: [], pending: ""))
            return .keep(limit: 0)
        case .array:
            frames.append(.array([]))
            return .keep(limit: 0)
        case .string:
            return .keepWithin(limit: currentName == "text" ? limits.maxBodyBytes : limits.maxFieldBytes)
        case .number:
            return .keep(limit: 64)
        case .literal:
            return .keep(limit: 0)
        }
    }

    mutating func keyStarts() -> Bool { !overflowed }

    /// False when the name is the second of its object.
    mutating func key(_ bytes: [UInt8]) -> Bool {
        guard case .object(let members, var names, _) = frames.last else { return true }
        guard names.insert(bytes).inserted else { return false }
        currentName = String(decoding: bytes, as: UTF8.self)
        frames[frames.count - 1] = .object(members: members, names: names, pending: currentName)
        return true
    }

    mutating func scalar(_ kind: JSONScalar, text: [UInt8]) {
        if overflowed { return }
        add(JSONValue(kind, text: text))
    }

    mutating func overLimit(byteCount: Int) {
        if overflowed { return }
        let limit = currentName == "text" ? limits.maxBodyBytes : limits.maxFieldBytes
        let what = currentName == "text" ? "a body" : "the value of '\(currentName)'"
        skipped.append("\(what) of \(byteCount) bytes was skipped (over the limit of \(limit))")
        add(.null)
    }

    /// The entry, when this end closed it.
    mutating func containerEnds() -> (value: JSONValue, skipped: [String])? {
        guard let frame = frames.popLast() else { return nil }
        let value: JSONValue =
            switch frame {
            case .object(let members, _, _): .object(members)
            case .array(let elements): .array(elements)
            }
        if frames.isEmpty { return (value, skipped) }
        // Past the value limit nothing new is kept, but a container opened before it
        // still takes its place: what came first is kept (the URL before the headers).
        add(value)
        return nil
    }

    private mutating func add(_ value: JSONValue) {
        guard let frame = frames.popLast() else { return }
        switch frame {
        case .object(var members, let names, let pending):
            members.append(JSONMember(name: pending, value: value))
            frames.append(.object(members: members, names: names, pending: ""))
        case .array(var elements):
            elements.append(value)
            frames.append(.array(elements))
        }
    }
}
