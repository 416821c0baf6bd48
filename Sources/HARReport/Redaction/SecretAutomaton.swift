/// An Aho–Corasick automaton over the secrets' UTF-8, for ``HARRedactingWriter``:
/// one step per byte whatever the number of secrets, and at each step the longest
/// secret that ends there, if one does.
///
/// Built as a trie of dictionaries, then laid flat: the start state's moves in a
/// table of 256, every other node's edges as a run of (byte, target) pairs sorted
/// by byte. Most bytes of a capture leave the automaton at its start or one or two
/// nodes from it, so a step is a table read or a scan of a node's few edges;
/// hashing a byte per step cost more than all the rest of the redaction.
struct SecretAutomaton {
    private struct Node {
        var next: [UInt8: Int32] = [:]
        var fail: Int32 = 0
        /// The pattern that ends here, or the longest one ending at a suffix (through `fail`), as an index.
        var output: Int32 = -1
    }

    static let start: Int32 = 0
    /// Each pattern's length in bytes, by index.
    private(set) var lengths: [Int] = []

    /// The start state's move on each byte.
    private var startMoves = [Int32](repeating: 0, count: 256)
    /// Node `n`'s edges are `edgeBytes[edgeStarts[n]..<edgeStarts[n + 1]]`, sorted, with their targets beside.
    private var edgeStarts: [Int32] = []
    private var edgeBytes: [UInt8] = []
    private var edgeTargets: [Int32] = []
    private var fails: [Int32] = []
    private var outputs: [Int32] = []
    /// How many bytes back each state reaches: the length of the secrets' prefix it stands for.
    private var depths: [Int32] = []

    /// `patterns`: distinct and not empty.
    init(patterns: [[UInt8]]) {
        var nodes = [Node()]
        for pattern in patterns { Self.insert(pattern, into: &nodes, lengths: &lengths) }
        lay(flat: nodes)
        buildFailureLinks()
    }

    /// How many of the bytes read so far a match still to come can take.
    func depth(of state: Int32) -> Int { Int(depths[Int(state)]) }

    /// The state after `byte`, and the index of the longest pattern ending there.
    @inline(__always) func step(_ state: Int32, _ byte: UInt8) -> (state: Int32, match: Int?) {
        let next = transition(state, byte)
        let output = outputs[Int(next)]
        return (next, output >= 0 ? Int(output) : nil)
    }

    @inline(__always) private func transition(_ from: Int32, _ byte: UInt8) -> Int32 {
        var current = from
        while current != Self.start {
            if let next = edge(of: current, on: byte) { return next }
            current = fails[Int(current)]
        }
        return startMoves[Int(byte)]
    }

    private func edge(of node: Int32, on byte: UInt8) -> Int32? {
        var index = Int(edgeStarts[Int(node)])
        let end = Int(edgeStarts[Int(node) + 1])
        while index < end {
            let candidate = edgeBytes[index]
            if candidate == byte { return edgeTargets[index] }
            if candidate > byte { return nil }
            index += 1
        }
        return nil
    }

    private static func insert(_ pattern: [UInt8], into nodes: inout [Node], lengths: inout [Int]) {
        var current = 0
        for byte in pattern {
            if let next = nodes[current].next[byte] {
                current = Int(next)
            } else {
                nodes.append(Node())
                nodes[current].next[byte] = Int32(nodes.count - 1)
                current = nodes.count - 1
            }
        }
        nodes[current].output = Int32(lengths.count)
        lengths.append(pattern.count)
    }

    private mutating func lay(flat nodes: [Node]) {
        edgeStarts.reserveCapacity(nodes.count + 1)
        for node in nodes {
            edgeStarts.append(Int32(edgeBytes.count))
            for (byte, target) in node.next.sorted(by: { $0.key < $1.key }) {
                edgeBytes.append(byte)
                edgeTargets.append(target)
            }
        }
        edgeStarts.append(Int32(edgeBytes.count))
        fails = Array(repeating: Self.start, count: nodes.count)
        outputs = nodes.map(\.output)
        depths = Array(repeating: 0, count: nodes.count)
    }

    /// Breadth first: each node's failure link is its longest proper suffix in the
    /// trie, and its output the longest pattern ending there or at that suffix. The
    /// start state's table is filled first: every byte it has no edge for stays there.
    private mutating func buildFailureLinks() {
        var queue: [Int32] = []
        for index in Int(edgeStarts[0])..<Int(edgeStarts[1]) {
            startMoves[Int(edgeBytes[index])] = edgeTargets[index]
            depths[Int(edgeTargets[index])] = 1
            queue.append(edgeTargets[index])
        }
        var head = 0
        while head < queue.count {
            let node = queue[head]
            head += 1
            for index in Int(edgeStarts[Int(node)])..<Int(edgeStarts[Int(node) + 1]) {
                let child = edgeTargets[index]
                let fail = node == Self.start ? Self.start : transition(fails[Int(node)], edgeBytes[index])
                fails[Int(child)] = fail
                depths[Int(child)] = depths[Int(node)] + 1
                if outputs[Int(child)] < 0 { outputs[Int(child)] = outputs[Int(fail)] }
                queue.append(child)
            }
        }
    }
}
