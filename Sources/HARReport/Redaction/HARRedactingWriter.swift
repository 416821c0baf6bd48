import EntitlementTokens

/// Writes a capture again with every secret replaced by its marker
/// (``HARRedaction``), byte for byte otherwise, so the structure, the order and
/// every other value survive (docs/DESIGN.md#redacting-a-capture).
///
/// The secrets are searched for in what the text says, not in how it is spelled:
/// JSON lets a writer spell any character of a string as an escape (`\/` or `/`,
/// `\u0041` or `A`, one way here and another a few bytes on). So each string is
/// unescaped as it passes (``JSONStringUnescaper``), and unescaped once more, since a
/// body that is itself JSON sits escaped inside a capture's string (a `<\/x>` of the
/// server's is `<\\/x>` in the file); the search runs on both readings. It is one
/// Aho–Corasick automaton over the secrets' UTF-8, stepped once per byte of each
/// reading whatever their number, so the cost is linear in the capture. Each
/// unescaped byte remembers where its spelling began, so a match replaces whole
/// escapes and the output is JSON whenever the input was; both readings start again
/// at each string's quote, so no match takes structure. Where matches overlap (one
/// secret inside another) the union is replaced by one marker, the longest's. Beyond
/// the chunk being fed, bytes are held only as long as a match could still take
/// them: the spelling of the bytes the automaton's state stands for, at most the
/// longest secret's length of the current string.
package struct HARRedactingWriter {
    /// One reading of the current string: its unescaping, the automaton's state on
    /// it, and where the spelling of each of its last `longest` bytes began in the
    /// file (a ring indexed by the byte's offset in the reading, a power of two long).
    private struct Reading {
        var unescaper = JSONStringUnescaper()
        var state = SecretAutomaton.start
        var count = 0
        var spellingStarts: [Int]
        let ringMask: Int

        init(longest: Int) {
            var size = 1
            while size < longest { size <<= 1 }
            spellingStarts = Array(repeating: 0, count: size)
            ringMask = size - 1
        }

        mutating func restart() {
            unescaper.reset()
            state = SecretAutomaton.start
            count = 0
        }

        /// Takes on `other`'s place in the same string: its state and the spelling
        /// of the bytes that state stands for, which a match can still take.
        mutating func follow(_ other: Reading, in automaton: SecretAutomaton) {
            state = other.state
            count = other.count
            for offset in (count - automaton.depth(of: state))..<count { spellingStarts[offset & ringMask] = other.spellingStarts[offset & ringMask] }
        }

        /// One byte of the reading, spelled from `start`: the offset where the secret
        /// that ends with it begins, and which secret, if one does.
        @inline(__always) mutating func advance(_ byte: UInt8, spelledFrom start: Int, in automaton: SecretAutomaton) -> (start: Int, pattern: Int)? {
            spellingStarts[count & ringMask] = start
            count += 1
            let (next, match) = automaton.step(state, byte)
            state = next
            guard let match else { return nil }
            return (spellingStarts[(count - automaton.lengths[match]) & ringMask], match)
        }

        /// Where a match still to come can start at the earliest: at the first of the
        /// bytes the automaton's state stands for, or at an escape being read.
        func earliestMatchStart(in automaton: SecretAutomaton) -> Int? {
            let depth = automaton.depth(of: state)
            if depth > 0 { return spellingStarts[(count - depth) & ringMask] }
            return unescaper.escapeStart
        }
    }

    private let automaton: SecretAutomaton
    private let markers: [[UInt8]]

    /// Bytes fed and not yet written, from absolute offset `heldStart` (a chunk is held whole before it is read).
    private var held: [UInt8] = []
    private var heldStart = 0
    private var fed = 0
    private var inString = false
    /// The string as the file spells it, unescaped once, and that unescaped again.
    private var once: Reading
    private var twice: Reading
    /// Until the first `\` of the string unescaped once, the second reading is the
    /// first: it is not run, and takes the first's place at that `\`.
    private var twiceIsOnce = true
    /// Replacements known, in order, and the one that may still grow.
    private var done: [(start: Int, end: Int, pattern: Int)] = []
    private var pending: (start: Int, end: Int, pattern: Int)?

    /// `secrets`: each value (unescaped) and the kind its marker names.
    package init(secrets: [String: String]) {
        let sorted = secrets.filter { !$0.key.isEmpty }.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
        automaton = SecretAutomaton(patterns: sorted.map { Array($0.key.utf8) })
        markers = sorted.map { Array(HARRedaction.marker(kind: $0.value, value: $0.key).utf8) }
        let longest = automaton.lengths.max() ?? 0
        once = Reading(longest: longest)
        twice = Reading(longest: longest)
    }

    /// Feeds the next chunk; writes what can no longer change.
    package mutating func feed(_ bytes: Span<UInt8>, to write: (Span<UInt8>) throws -> Void) rethrows {
        held.append(addingCapacity: bytes.count) { output in
            for index in 0..<bytes.count { output.append(bytes[index]) }
        }
        var index = 0
        while index < bytes.count {
            if inString, twiceIsOnce, once.unescaper.escapeStart == nil {
                index = readPlainRun(bytes, from: index)
                if index == bytes.count { break }
            }
            step(bytes[index])
            index += 1
        }
        var limit = fed
        if let start = once.earliestMatchStart(in: automaton) { limit = min(limit, start) }
        if !twiceIsOnce, let start = twice.earliestMatchStart(in: automaton) { limit = min(limit, start) }
        try flush(upTo: limit, to: write)
    }

    /// Writes the rest.
    package mutating func finish(to write: (Span<UInt8>) throws -> Void) rethrows {
        if let pending { done.append(pending) }
        pending = nil
        try flush(upTo: fed, to: write)
    }

    // MARK: Reading

    /// Most of a capture is string text with no escape: read as a run, up to the
    /// next quote or backslash (returned), with the automaton's state in hand. A
    /// byte after which the automaton is back at its start is in no match to come
    /// (its state would stand for it), so its spelling is not written down.
    private mutating func readPlainRun(_ bytes: Span<UInt8>, from start: Int) -> Int {
        var index = start
        var state = once.state
        var count = once.count
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { break }
            let (next, match) = automaton.step(state, byte)
            if next != SecretAutomaton.start { once.spellingStarts[count & once.ringMask] = fed }
            count += 1
            fed += 1
            state = next
            index += 1
            if let match {
                once.state = state
                once.count = count
                record((once.spellingStarts[(count - automaton.lengths[match]) & once.ringMask], match))
            }
        }
        once.state = state
        once.count = count
        return index
    }

    @inline(__always) private mutating func step(_ byte: UInt8) {
        let position = fed
        fed += 1
        guard inString else {
            if byte == UInt8(ascii: "\"") { enterString() }
            return
        }
        if once.unescaper.escapeStart == nil {
            // Most of a capture is plain string text: no escape to read.
            if byte == UInt8(ascii: "\"") {
                inString = false
                return
            }
            if byte != UInt8(ascii: "\\") { return readOnce(byte, spelledFrom: position) }
        }
        unescape(byte, spelledFrom: position, into: .once)
    }

    private enum Layer { case once, twice }

    /// Reads `byte` through the unescaper of the layer below `layer` and hands on what it says.
    private mutating func unescape(_ byte: UInt8, spelledFrom start: Int, into layer: Layer) {
        let (output, broken): (JSONStringUnescaper.Output, Bool)
        switch layer {
        case .once:
            (output, broken) = once.unescaper.read(byte, at: start)
            if broken { once.state = SecretAutomaton.start }
        case .twice:
            (output, broken) = twice.unescaper.read(byte, at: start)
            if broken { twice.state = SecretAutomaton.start }
        }
        switch output {
        case .nothing: break
        case .byte(let unescaped, let start): read(unescaped, spelledFrom: start, in: layer)
        case .scalar(let scalar, let start): Self.forEachUTF8Byte(of: scalar) { read($0, spelledFrom: start, in: layer) }
        }
    }

    private mutating func read(_ byte: UInt8, spelledFrom start: Int, in layer: Layer) {
        switch layer {
        case .once: readOnce(byte, spelledFrom: start)
        case .twice: readTwice(byte, spelledFrom: start)
        }
    }

    /// A byte of the string unescaped once: searched, and unescaped again.
    @inline(__always) private mutating func readOnce(_ byte: UInt8, spelledFrom start: Int) {
        if twiceIsOnce {
            guard byte == UInt8(ascii: "\\") else {
                if let match = once.advance(byte, spelledFrom: start, in: automaton) { record(match) }
                return
            }
            twice.follow(once, in: automaton)
            twiceIsOnce = false
        }
        if let match = once.advance(byte, spelledFrom: start, in: automaton) { record(match) }
        unescape(byte, spelledFrom: start, into: .twice)
    }

    private mutating func readTwice(_ byte: UInt8, spelledFrom start: Int) {
        if let match = twice.advance(byte, spelledFrom: start, in: automaton) { record(match) }
    }

    private mutating func enterString() {
        inString = true
        once.restart()
        twice.restart()
        twiceIsOnce = true
    }

    /// A scalar's UTF-8 (a lone surrogate never reaches here: the unescaper pairs them).
    private static func forEachUTF8Byte(of scalar: UInt32, _ body: (UInt8) -> Void) {
        for byte in UTF8.encode(Unicode.Scalar(scalar) ?? "\u{FFFD}")! { body(byte) }
    }

    // MARK: Replacing

    /// A secret from `match.start` to the last byte fed.
    private mutating func record(_ match: (start: Int, pattern: Int)) {
        guard match.start >= heldStart else { return }
        var merged = (start: match.start, end: fed, pattern: match.pattern)
        if let growing = pending {
            if match.start < growing.end { merged = union(growing, merged) } else { done.append(growing) }
            pending = nil
        }
        // A longer match can reach back over replacements already closed (none written yet:
        // only bytes a match can no longer reach are written).
        while let last = done.last, last.end > merged.start {
            merged = union(last, merged)
            done.removeLast()
        }
        pending = merged
    }

    /// Two overlapping replacements as one, named by the longer secret.
    private func union(_ a: (start: Int, end: Int, pattern: Int), _ b: (start: Int, end: Int, pattern: Int)) -> (start: Int, end: Int, pattern: Int) {
        (min(a.start, b.start), max(a.end, b.end), automaton.lengths[a.pattern] >= automaton.lengths[b.pattern] ? a.pattern : b.pattern)
    }

    /// Writes held bytes before `limit` (absolute), markers for the replacements
    /// that end before it; a replacement that may still grow stops the write at its start.
    private mutating func flush(upTo limit: Int, to write: (Span<UInt8>) throws -> Void) rethrows {
        if let growing = pending, growing.end <= limit {
            done.append(growing)
            pending = nil
        }
        var stop = limit
        if let growing = pending { stop = min(stop, growing.start) }
        var out: [UInt8] = []
        var cursor = heldStart
        var finished = 0
        for replacement in done {
            guard replacement.end <= stop else { break }
            out.append(contentsOf: held[(cursor - heldStart)..<(replacement.start - heldStart)])
            out.append(contentsOf: markers[replacement.pattern])
            cursor = replacement.end
            finished += 1
        }
        done.removeFirst(finished)
        if let next = done.first { stop = min(stop, next.start) }
        if stop > cursor { out.append(contentsOf: held[(cursor - heldStart)..<(stop - heldStart)]) }
        cursor = max(cursor, stop)
        held.removeFirst(cursor - heldStart)
        heldStart = cursor
        if !out.isEmpty { try write(out.span) }
    }
}
