/// The framing's one-step path for plain tags exists only for speed
/// (docs/PERFORMANCE.md, "Internal architecture"): it must read every input
/// exactly as the general path does. This is the comparison, for the fuzz
/// oracle (`TokenTestSupport`'s `DecodeOracle`, on every fuzz input) and the
/// unit tests — not API (`@_spi`).
@_spi(TokenTestSupport)
public enum FramingPathComparison {
    /// Where the two paths first read `bytes` differently when fed up to each
    /// of `cuts` and then to the end, or nil when they agree throughout.
    public static func difference(_ bytes: [UInt8], cuts: [Int]) -> String? {
        let fast = Reading(bytes, cuts: cuts, plainTags: true)
        let general = Reading(bytes, cuts: cuts, plainTags: false)
        guard fast != general else { return nil }
        for (index, (a, b)) in zip(fast.afterEachCut, general.afterEachCut).enumerated() where a != b {
            return "after cut \(index): one-step path \(a), general path \(b)"
        }
        return "frame: one-step path \(fast.frame), general path \(general.frame)"
    }

    /// Everything the scanner says about `bytes` fed up to each cut (then to the end).
    struct Reading: Equatable {
        struct State: Equatable, CustomStringConvertible {
            var isComplete, isMarkupOpen, sawOnlyDeclaration, tokenElementHasUnknownName: Bool
            var firstError: TokenError?
            var description: String {
                "complete=\(isComplete) open=\(isMarkupOpen) onlyDeclaration=\(sawOnlyDeclaration) unknownName=\(tokenElementHasUnknownName) error=\(firstError.map { "\($0.code)" } ?? "none")"
            }
        }
        var afterEachCut: [State] = []
        var frame: Result<TokenFrame, TokenError>

        init(_ bytes: [UInt8], cuts: [Int], plainTags: Bool) {
            var scanner = FrameScanner(takesPlainTagsInOneStep: plainTags)
            let whole = bytes.span
            for end in cuts.filter({ $0 > 0 && $0 < bytes.count }).sorted() + [bytes.count] {
                scanner.scan(whole.extracting(0..<end))
                afterEachCut.append(
                    State(
                        isComplete: scanner.isComplete,
                        isMarkupOpen: scanner.isMarkupOpen,
                        sawOnlyDeclaration: scanner.sawOnlyDeclaration,
                        tokenElementHasUnknownName: scanner.tokenElementHasUnknownName,
                        firstError: scanner.firstError
                    )
                )
            }
            let scanned = scanner
            frame = Result { () throws(TokenError) in try scanned.frame(in: whole) }
        }
    }
}
