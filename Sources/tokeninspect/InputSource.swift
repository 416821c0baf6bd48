import EntitlementTokens

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One INPUT of the command line: a token string, `@PATH`, or `-` for stdin.
enum InputSource: Sendable, Equatable {
    case literal(String, position: Int)
    case file(String)
    case standardInput
    /// Stdin of which `bytes` were already read (to tell credentials from tokens): they come first.
    case replayedStandardInput([UInt8])

    init(argument: String, position: Int) {
        if argument == "-" {
            self = .standardInput
        } else if argument.hasPrefix("@"), argument.count > 1 {
            self = .file(String(argument.dropFirst()))
        } else {
            self = .literal(argument, position: position)
        }
    }

    /// How verdicts name where a token came from.
    var name: String {
        switch self {
        case .literal(_, let position): "argument \(position)"
        case .file(let path): path
        case .standardInput, .replayedStandardInput: "stdin"
        }
    }

    struct Unreadable: Error, CustomStringConvertible {
        var description: String
    }

    /// Streams the source's records to `body` one at a time, as each is cut,
    /// with flat memory: files and stdin are read 64 KiB at a time, and no
    /// list of a chunk's records is ever made (a chunk of one-byte lines holds
    /// tens of thousands).
    func forEachRecord(configuration: DecoderConfiguration, _ body: (TokenRecord) -> Void) throws(Unreadable) {
        var splitter = RecordSplitter(configuration: configuration)
        switch self {
        case .literal(let text, let position):
            // An empty argument (`"$TOKEN"` with TOKEN unset) is nothing to work on, not a malformed token.
            guard text.utf8.contains(where: { !($0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09) }) else {
                throw Unreadable(description: "argument \(position) is empty: there is no token in it")
            }
            // One argument is one token, even if it is wrapped across lines;
            // only a REST JSON document may hold several.
            if text.utf8.first(where: { !($0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09) }) == UInt8(ascii: "{") {
                let bytes = Array(text.utf8)
                splitter.feed(bytes.span, each: body)
                splitter.finish(each: body)
            } else {
                if access(text, F_OK) == 0, !text.contains("<") {
                    OutputStream.standardError.write("tokeninspect: note: '\(text)' is read as a token; to read that file, write @\(text)\n")
                    OutputStream.standardError.flush()
                }
                body(TokenRecord(index: 1, byteOffset: 0, line: 1, bytes: Array(text.utf8)))
            }
        case .file(let path):
            let descriptor = open(path, O_RDONLY)
            guard descriptor >= 0 else {
                throw Unreadable(description: "cannot read \(path): \(String(cString: strerror(errno)))")
            }
            defer { close(descriptor) }
            var info = stat()
            if fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR {
                throw Unreadable(description: "cannot read \(path): it is a directory")
            }
            try Self.read(descriptor, name: path, into: &splitter, body)
        case .standardInput:
            try Self.read(STDIN_FILENO, name: "stdin", into: &splitter, body)
        case .replayedStandardInput(let bytes):
            splitter.feed(bytes.span, each: body)
            try Self.read(STDIN_FILENO, name: "stdin", into: &splitter, body)
        }
    }

    private static func read(
        _ descriptor: Int32,
        name: String,
        into splitter: inout RecordSplitter,
        _ body: (TokenRecord) -> Void
    ) throws(Unreadable) {
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw Unreadable(description: "cannot read \(name): \(String(cString: strerror(errno)))")
            }
            if count == 0 { break }
            splitter.feed(chunk.span.extracting(..<count), each: body)
        }
        splitter.finish(each: body)
    }
}

extension [InputSource] {
    /// Every record of every input, in order. An input that cannot be read is
    /// named on stderr, after what stdout holds so far, and the run goes on
    /// with the next; returns whether one could not be read (exit status 2).
    func forEachRecord(
        configuration: DecoderConfiguration,
        output: OutputStream,
        errors: OutputStream,
        _ body: (InputSource, TokenRecord) -> Void
    ) -> Bool {
        var unreadable = false
        for input in self {
            do {
                try input.forEachRecord(configuration: configuration) { record in body(input, record) }
            } catch {
                output.flush()
                errors.write("tokeninspect: error: \(error.description)\n")
                errors.flush()
                unreadable = true
            }
        }
        return unreadable
    }
}
