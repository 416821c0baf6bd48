import CDNTokens

/// FuzzRequestPath: the one reading of a request path (``RequestPath``,
/// docs/DESIGN.md#one-reading-of-a-path) against an independent reading of
/// RFC 3986.
///
/// - **What the reading accepts, no resolution moves**: the accepted path,
///   with every escape decoded (as the most eager origin decodes it), is left
///   unchanged by RFC 3986 §5.2.4's `remove_dot_segments` (written here from
///   the RFC's buffer algorithm, not the library's segment test) and holds no
///   `\`, NUL or control byte.
/// - **Nothing is lost but unreserved escapes**: the accepted path is the
///   input's path with `%XX` of unreserved bytes decoded (compared after
///   decoding both), and reading it again gives it back.
/// - **A refusal names itself**: every refusal is `INVALID_URL`.
public final class RequestPathOracle {
    public static let target = "FuzzRequestPath"

    public init() {}

    public func check(_ input: [UInt8]) {
        let path: String
        do {
            path = try RequestPath.read(input)
        } catch {
            guard error.status == .invalidURL else { oracleFailure(Self.target, "a refusal that is not INVALID_URL: \(error)") }
            return
        }
        let decoded = Self.fullyDecoded(Array(path.utf8))
        guard !decoded.contains(where: { $0 < 0x20 || $0 == 0x7F || $0 == UInt8(ascii: "\\") }) else {
            oracleFailure(Self.target, "an accepted path decodes to a control byte or a backslash: \(escaped(input))")
        }
        guard Self.removeDotSegments(decoded) == decoded else {
            oracleFailure(Self.target, "an accepted path is moved by remove_dot_segments once decoded: \(escaped(input)) → \(escaped(path))")
        }
        let inputPath = input.prefix { $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") }
        guard Self.fullyDecoded(Array(inputPath)) == decoded else {
            oracleFailure(Self.target, "the reading changed more than unreserved escapes: \(escaped(input)) → \(escaped(path))")
        }
        guard (try? RequestPath.read(path.utf8)) == path else {
            oracleFailure(Self.target, "reading an accepted path again changes it: \(escaped(path))")
        }
    }

    /// Every `%XX` decoded, whatever byte it names, by the harness's own decoder (the Akamai oracle's).
    static func fullyDecoded(_ bytes: [UInt8]) -> [UInt8] { CDNAkamaiOracle.referenceDecode(bytes) }

    /// RFC 3986 §5.2.4, step by step over an input and an output buffer.
    public static func removeDotSegments(_ path: [UInt8]) -> [UInt8] {
        var input = ArraySlice(path)
        var output: [UInt8] = []
        func starts(_ prefix: String) -> Bool { input.starts(with: prefix.utf8) }
        func isExactly(_ text: String) -> Bool { input.elementsEqual(text.utf8) }
        func removeLastOutputSegment() {
            if let slash = output.lastIndex(of: UInt8(ascii: "/")) { output.removeSubrange(slash...) } else { output.removeAll() }
        }
        while !input.isEmpty {
            if starts("../") {
                input = input.dropFirst(3)
            }  // A
            else if starts("./") {
                input = input.dropFirst(2)
            } else if starts("/./") {
                input = input.dropFirst(2)
            }  // B
            else if isExactly("/.") {
                input = ArraySlice("/".utf8)
            } else if starts("/../") {
                input = input.dropFirst(3)
                removeLastOutputSegment()
            }  // C
            else if isExactly("/..") {
                input = ArraySlice("/".utf8)
                removeLastOutputSegment()
            } else if isExactly(".") || isExactly("..") {
                input = []
            }  // D
            else {  // E
                var end = input.startIndex
                if input[end] == UInt8(ascii: "/") { end += 1 }
                while end < input.endIndex && input[end] != UInt8(ascii: "/") { end += 1 }
                output += input[input.startIndex..<end]
                input = input[end...]
            }
        }
        return output
    }
}
