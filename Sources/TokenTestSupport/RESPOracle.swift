import RedisRESP

/// What must hold for any bytes a Redis server (or an attacker between it and
/// us) can send:
///
/// - **chunk invariance**: fed whole, cut at the input's cut points, and (when
///   asked) byte by byte, the decoder gives the same replies and then the same
///   error (code, offset and message) or none;
/// - an error's offset lies inside the stream;
/// - every reply re-encoded in canonical RESP2 decodes back to itself, in no
///   more bytes than it came in;
/// - tighter limits only ever refuse: they give a prefix of the same replies.
///
/// Input layout: byte 0 holds the number of cut points n (bits 0–4), bit 5
/// "also byte by byte" (streams up to 4 KiB), bit 6 "tight limits"; then n
/// cut points, UInt16 little-endian modulo (stream length + 1); then the stream.
public enum RESPOracle {
    public static let target = "FuzzRESP"

    struct Outcome: Equatable {
        var replies: [RESPReply] = []
        var error: RESPError?
        var errorMessage: String?
        var consumedAll = false
    }

    static let tight = RESPLimits(maxLineBytes: 24, maxBulkBytes: 16, maxArrayCount: 4, maxNestingDepth: 3, maxReplyBytes: 96)

    static func decode(_ chunks: [ArraySlice<UInt8>], limits: RESPLimits) -> Outcome {
        var decoder = RESPDecoder(limits: limits)
        var outcome = Outcome()
        for chunk in chunks {
            decoder.feed(chunk)
            do {
                while let reply = try decoder.next() { outcome.replies.append(reply) }
            } catch {
                outcome.error = error
                outcome.errorMessage = error.message
                return outcome
            }
        }
        outcome.consumedAll = decoder.isAtReplyBoundary
        return outcome
    }

    public static func check(_ input: [UInt8]) {
        guard let header = input.first else { return }
        let cutCount = Int(header & 0x1F)
        let byteByByte = header & 0x20 != 0
        let limits = header & 0x40 != 0 ? tight : .default
        guard input.count >= 1 + 2 * cutCount else { return }
        let stream = input[(1 + 2 * cutCount)...]
        var cuts: [Int] = []
        for index in 0..<cutCount {
            let low = Int(input[1 + 2 * index])
            let high = Int(input[2 + 2 * index])
            cuts.append((high << 8 | low) % (stream.count + 1))
        }
        cuts.sort()

        let whole = decode([stream], limits: limits)
        var chunks: [ArraySlice<UInt8>] = []
        var start = stream.startIndex
        for cut in cuts {
            chunks.append(stream[start..<(stream.startIndex + cut)])
            start = stream.startIndex + cut
        }
        chunks.append(stream[start...])
        let chunked = decode(chunks, limits: limits)
        if chunked != whole {
            oracleFailure(target, "cut at \(cuts): \(describe(chunked))\nwhole: \(describe(whole))")
        }
        if byteByByte, stream.count <= 4096 {
            let single = decode(stream.indices.map { stream[$0...$0] }, limits: limits)
            if single != whole {
                oracleFailure(target, "byte by byte: \(describe(single))\nwhole: \(describe(whole))")
            }
        }
        if let error = whole.error, !(0..<stream.count).contains(error.offset) {
            oracleFailure(target, "error offset outside the \(stream.count)-byte stream: \(error)")
        }

        let canonical = whole.replies.flatMap { $0.encoded() }
        let reread = decode([canonical[...]], limits: limits)
        if reread.replies != whole.replies || reread.error != nil {
            oracleFailure(target, "re-encoded replies read back as \(describe(reread))\nfirst: \(describe(whole))")
        }
        if canonical.count > stream.count {
            oracleFailure(target, "canonical form (\(canonical.count) bytes) longer than the input (\(stream.count))")
        }

        if limits != tight {
            let tighter = decode([stream], limits: tight)
            if tighter.replies.count > whole.replies.count
                || Array(whole.replies.prefix(tighter.replies.count)) != tighter.replies
                || (tighter.error == nil && tighter != whole)
            {
                oracleFailure(target, "tight limits accepted what the defaults did not: \(describe(tighter))\ndefaults: \(describe(whole))")
            }
        }
    }

    static func describe(_ outcome: Outcome) -> String {
        "\(outcome.replies.count) replies \(outcome.replies.prefix(8)), error \(outcome.error.map(String.init(describing:)) ?? "none"), at a boundary: \(outcome.consumedAll)"
    }
}
