import HARReport

#if canImport(Glibc)
import Glibc
#endif

/// A HAR given to `inspect` or `verify` is a capture, not a token: those
/// commands would read its first token-like string and say nothing of the rest.
/// It is recognised by its start (a JSON object whose first member is `log`)
/// and sent to `tokeninspect har` with a usage error (docs/HAR.md).
enum HARInputCheck {
    /// Exits 64 naming `tokeninspect har` when an argument or a file INPUT is a HAR.
    /// Stdin is not looked at: peeking would take bytes the token reader needs.
    static func refuseCaptures(_ inputs: [InputSource]) throws {
        for source in inputs {
            let start: [UInt8]
            switch source {
            case .literal(let text, _): start = Array(text.utf8.prefix(4096))
            case .file(let path): start = Self.start(of: path)
            case .standardInput, .replayedStandardInput: continue
            }
            guard HARReader.looksLikeHAR(start) else { continue }
            OutputStream.standardError.write(
                "tokeninspect: error: \(source.name) is a HAR capture, not a token: read it with tokeninspect har \(source.name == "stdin" ? "-" : source.name)\n"
            )
            OutputStream.standardError.flush()
            throw ExitCode(64)
        }
    }

    /// The first 4 KiB of a file; empty when it cannot be read (the token reader then says why).
    private static func start(of path: String) -> [UInt8] {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { return [] }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: 4096)
        let count = bytes.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
        return count > 0 ? Array(bytes.prefix(count)) : []
    }
}
