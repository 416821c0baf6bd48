import EntitlementTokens

/// FuzzStream: a differential oracle. The fuzzer chooses where the input is
/// cut; feeding it in those chunks must give exactly the records — index,
/// line, byte offset, and the token or the error — that feeding it whole gives.
///
/// Input layout (so the fuzzer mutates the cuts and the stream together):
///
///     byte 0        bits 0-4: number of cut points n (0-31)
///                   bit 5: feed chunks as non-contiguous collections
///                   bit 6: also feed byte by byte (payloads up to 1 KiB)
///     2n bytes      cut points, UInt16 little-endian, taken modulo (payload length + 1)
///     the rest      the stream
public final class StreamOracle {
    public static let target = "FuzzStream"

    public struct Plan: Sendable {
        public var cuts: [Int]
        public var nonContiguous: Bool
        public var byteByByte: Bool
        public var payload: [UInt8]
    }

    public init() {}

    public static func plan(_ input: [UInt8]) -> Plan? {
        guard let header = input.first else { return nil }
        let count = Int(header & 0x1F)
        guard input.count >= 1 + 2 * count else { return nil }
        let payload = Array(input[(1 + 2 * count)...])
        var cuts: [Int] = []
        for index in 0..<count {
            let raw = Int(input[1 + 2 * index]) | Int(input[2 + 2 * index]) << 8
            cuts.append(raw % (payload.count + 1))
        }
        return Plan(cuts: cuts.sorted(), nonContiguous: header & 0x20 != 0, byteByByte: header & 0x40 != 0, payload: payload)
    }

    /// Feeds `payload` cut at `cuts` (sorted); returns one summary per record.
    public static func records(_ payload: [UInt8], cuts: [Int], nonContiguous: Bool = false) -> [String] {
        let stream = TokenStreamDecoder()
        var out: [String] = []
        var start = 0
        for cut in cuts + [payload.count] where cut >= start {
            let chunk = payload[start..<cut]
            let records = nonContiguous ? stream.feed(chunk.lazy.map { $0 }) : stream.feed(chunk)
            out += records.map(Summary.of)
            start = cut
        }
        out += stream.finish().map(Summary.of)
        return out
    }

    public func check(_ input: [UInt8]) {
        guard let plan = Self.plan(input) else { return }
        let whole = Self.records(plan.payload, cuts: [])
        Self.checkShape(whole, payload: plan.payload)
        let chunked = Self.records(plan.payload, cuts: plan.cuts, nonContiguous: plan.nonContiguous)
        Self.compare(whole, chunked, how: "cut at \(plan.cuts)\(plan.nonContiguous ? " (non-contiguous chunks)" : "")")
        if plan.byteByByte && plan.payload.count <= 1024 {
            let bytewise = Self.records(plan.payload, cuts: Array(0..<plan.payload.count))
            Self.compare(whole, bytewise, how: "fed byte by byte")
        }
    }

    static func compare(_ whole: [String], _ chunked: [String], how: String) {
        guard whole != chunked else { return }
        let firstDifference = Array(zip(whole, chunked)).firstIndex { $0.0 != $0.1 } ?? min(whole.count, chunked.count)
        oracleFailure(
            target,
            """
            feeding the stream \(how) gives other records than feeding it whole \
            (\(whole.count) vs \(chunked.count) records; first difference at record \(firstDifference + 1))
            --- whole
            \(whole.joined(separator: "\n"))
            --- chunked
            \(chunked.joined(separator: "\n"))
            """
        )
    }

    /// Records are numbered 1, 2, 3…, never go back in the stream, and the
    /// line of each is the line its byte offset is on.
    static func checkShape(_ summaries: [String], payload: [UInt8]) {
        let payloadCount = payload.count
        var previousOffset = 0
        var previousLine = 1
        var newlines = 0  // line feeds in payload[..<previousOffset]
        for (position, summary) in summaries.enumerated() {
            // "#index line=L offset=O bytes=B ..."
            let words = summary.prefix { $0 != "\n" }.split(separator: " ", maxSplits: 3)
            guard words.count >= 3, words[0] == "#\(position + 1)",
                let line = Int(words[1].dropFirst("line=".count)), let offset = Int(words[2].dropFirst("offset=".count))
            else { oracleFailure(target, "record \(position + 1) is numbered wrongly\n\(summaries.joined(separator: "\n"))") }
            guard offset >= previousOffset, line >= previousLine, offset <= payloadCount, line >= 1 else {
                oracleFailure(
                    target,
                    "record \(position + 1) goes back in the stream (line \(line), offset \(offset))\n\(summaries.joined(separator: "\n"))"
                )
            }
            newlines += payload[previousOffset..<offset].reduce(0) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
            guard 1 + newlines == line else {
                oracleFailure(
                    target,
                    "record \(position + 1) says line \(line), but its offset \(offset) is on line \(1 + newlines)\n\(summaries.joined(separator: "\n"))"
                )
            }
            previousOffset = offset
            previousLine = line
        }
    }
}
