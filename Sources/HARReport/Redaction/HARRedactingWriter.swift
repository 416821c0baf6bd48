import EntitlementTokens

/// Writes a capture again with every secret replaced by its marker
/// (``HARRedaction``), byte for byte otherwise, so the structure, the order and
/// every other value survive (docs/DESIGN.md#redacting-a-capture).
///
/// The secrets are searched for in the raw JSON text as JSON writes them (each
/// value's escaped form, and with `\/` for `/`), all at once by an Aho–Corasick
/// automaton: one step per byte whatever the number of secrets, so the cost is
/// linear in the capture. Where matches overlap (one secret inside another) the
/// union is replaced by one marker, the longest's. A match never starts inside an
/// escape sequence of the text (after a `\`, or in the four digits of `\u`), so
/// what is written is JSON whenever what was read was. Bytes are held only as long
/// as a longer match could still take them: at most the longest secret's length
/// beyond what has been fed.
package struct HARRedactingWriter {
    private struct Node {
        var next: [UInt8: Int32] = [:]
        var fail: Int32 = 0
        /// The pattern that ends here, or the longest one ending at a suffix (through `fail`), as an index.
        var output: Int32 = -1
        var depth: Int32 = 0
    }

    private var nodes: [Node] = [Node()]
    private var patterns: [(length: Int, marker: [UInt8])] = []
    private var longest = 0
    private var state: Int32 = 0

    /// Bytes fed and not yet written, from absolute offset `heldStart`, each with
    /// whether a match may start there (false inside an escape sequence).
    private var held: [UInt8] = []
    private var mayStart: [Bool] = []
    private var heldStart = 0
    private var fed = 0
    /// Escape state of the text: after a `\`, and how many `\u` digits remain.
    private var afterBackslash = false
    private var hexRemaining = 0
    /// Replacements known, in order, and the one that may still grow.
    private var done: [(start: Int, end: Int, pattern: Int)] = []
    private var pending: (start: Int, end: Int, pattern: Int)?

    /// `secrets`: each value (unescaped) and the kind its marker names.
    package init(secrets: [String: String]) {
        for (value, kind) in secrets.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
            let marker = Array(HARRedaction.marker(kind: kind, value: value).utf8)
            for form in Self.writtenForms(of: value) {
                longest = max(longest, form.count)
                insert(form, pattern: patterns.count)
                patterns.append((form.count, marker))
            }
        }
        buildFailureLinks()
    }

    /// Feeds the next chunk; writes what can no longer change.
    package mutating func feed(_ bytes: Span<UInt8>, to write: (Span<UInt8>) throws -> Void) rethrows {
        for index in 0..<bytes.count { step(bytes[index]) }
        try flush(upTo: fed - max(longest - 1, 0), to: write)
    }

    /// Writes the rest.
    package mutating func finish(to write: (Span<UInt8>) throws -> Void) rethrows {
        if let pending { done.append(pending) }
        pending = nil
        try flush(upTo: fed, to: write)
    }

    // MARK: Matching

    private mutating func step(_ byte: UInt8) {
        let position = fed
        held.append(byte)
        let inEscape = afterBackslash || hexRemaining > 0
        mayStart.append(!inEscape)
        if hexRemaining > 0 {
            hexRemaining -= 1
        } else if afterBackslash {
            afterBackslash = false
            if byte == UInt8(ascii: "u") { hexRemaining = 4 }
        } else if byte == UInt8(ascii: "\\") {
            afterBackslash = true
        }
        fed += 1
        state = transition(state, byte)
        let output = nodes[Int(state)].output
        guard output >= 0 else { return }
        let pattern = Int(output)
        let start = position + 1 - patterns[pattern].length
        // A match that starts inside an escape, or whose last byte opens one, is no match of the text.
        guard start >= heldStart, mayStart[start - heldStart], !(afterBackslash && byte == UInt8(ascii: "\\")) else { return }
        var merged = (start: start, end: position + 1, pattern: pattern)
        if let growing = pending {
            if start < growing.end { merged = union(growing, merged) } else { done.append(growing) }
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
        (min(a.start, b.start), max(a.end, b.end), patterns[a.pattern].length >= patterns[b.pattern].length ? a.pattern : b.pattern)
    }

    private func transition(_ from: Int32, _ byte: UInt8) -> Int32 {
        var current = from
        while true {
            if let next = nodes[Int(current)].next[byte] { return next }
            if current == 0 { return 0 }
            current = nodes[Int(current)].fail
        }
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
            out.append(contentsOf: patterns[replacement.pattern].marker)
            cursor = replacement.end
            finished += 1
        }
        done.removeFirst(finished)
        if let next = done.first { stop = min(stop, next.start) }
        if stop > cursor { out.append(contentsOf: held[(cursor - heldStart)..<(stop - heldStart)]) }
        cursor = max(cursor, stop)
        held.removeFirst(cursor - heldStart)
        mayStart.removeFirst(cursor - heldStart)
        heldStart = cursor
        if !out.isEmpty { try write(out.span) }
    }

    // MARK: The automaton

    private mutating func insert(_ form: [UInt8], pattern: Int) {
        var current = 0
        for byte in form {
            if let next = nodes[current].next[byte] {
                current = Int(next)
            } else {
                nodes.append(Node(depth: nodes[current].depth + 1))
                nodes[current].next[byte] = Int32(nodes.count - 1)
                current = nodes.count - 1
            }
        }
        if nodes[current].output < 0 || patterns[Int(nodes[current].output)].length < form.count { nodes[current].output = Int32(pattern) }
    }

    /// Breadth first: each node's failure link is its longest proper suffix in the
    /// trie, and its output the longest pattern ending there or at that suffix.
    private mutating func buildFailureLinks() {
        var queue: [Int32] = nodes[0].next.values.sorted()
        var head = 0
        while head < queue.count {
            let node = Int(queue[head])
            head += 1
            for (byte, child) in nodes[node].next.sorted(by: { $0.key < $1.key }) {
                let fail = node == 0 ? 0 : transition(nodes[node].fail, byte)
                nodes[Int(child)].fail = fail
                if nodes[Int(child)].output < 0 { nodes[Int(child)].output = nodes[Int(fail)].output }
                queue.append(child)
            }
        }
    }

    /// How JSON writers spell a value inside a string: RFC 8259's escapes, and
    /// the same with `/` written `\/` (some writers do).
    static func writtenForms(of value: String) -> [[UInt8]] {
        var plain: [UInt8] = []
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): plain += Array("\\\"".utf8)
            case UInt8(ascii: "\\"): plain += Array("\\\\".utf8)
            case 0x0A: plain += Array("\\n".utf8)
            case 0x0D: plain += Array("\\r".utf8)
            case 0x09: plain += Array("\\t".utf8)
            case 0..<0x20:
                plain += Array("\\u00\(ByteRules.lowercaseHex([byte]))".utf8)
            default: plain.append(byte)
            }
        }
        guard plain.contains(UInt8(ascii: "/")) else { return [plain] }
        var slashed: [UInt8] = []
        for byte in plain {
            if byte == UInt8(ascii: "/") { slashed += Array("\\/".utf8) } else { slashed.append(byte) }
        }
        return [plain, slashed]
    }
}
