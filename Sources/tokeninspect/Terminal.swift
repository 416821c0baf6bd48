import EntitlementTokens

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `--color`: when to colour the text output.
enum ColorChoice: String, CaseIterable, Sendable {
    case auto, always, never
}

/// What the process is connected to, decided once: colour only for a person
/// at a terminal who has not asked for none (https://no-color.org) and whose
/// terminal can show it (`TERM=dumb` cannot).
struct Terminal: Sendable {
    var stdoutIsTerminal: Bool
    var stderrIsTerminal: Bool
    var stdinIsTerminal: Bool
    var noColor: Bool
    var dumb: Bool

    static let current = Terminal(
        stdoutIsTerminal: isatty(STDOUT_FILENO) == 1,
        stderrIsTerminal: isatty(STDERR_FILENO) == 1,
        stdinIsTerminal: isatty(STDIN_FILENO) == 1,
        noColor: getenv("NO_COLOR").map { $0.pointee != 0 } ?? false,
        dumb: getenv("TERM").map { String(cString: $0) == "dumb" } ?? false
    )

    func usesColor(_ choice: ColorChoice) -> Bool {
        switch choice {
        case .always: true
        case .never: false
        case .auto: stdoutIsTerminal && !noColor && !dumb
        }
    }
}

/// Buffered writes to a file descriptor; a person's terminal sees whole blocks.
final class OutputStream {
    private let descriptor: Int32
    private var buffer: [UInt8] = []

    init(descriptor: Int32) {
        self.descriptor = descriptor
        buffer.reserveCapacity(1 << 16)
    }

    // Only the main thread writes output (workers return values), so these
    // process-wide streams are never touched concurrently.
    nonisolated(unsafe) static let standardOutput = OutputStream(descriptor: STDOUT_FILENO)
    nonisolated(unsafe) static let standardError = OutputStream(descriptor: STDERR_FILENO)

    /// Text for a terminal or a log: input-derived parts were escaped when
    /// the `TerminalText` was made (there is no `String` overload on purpose).
    func write(_ text: TerminalText) {
        buffer.append(contentsOf: text.rendered.utf8)
        if buffer.count >= 1 << 16 { flush() }
    }

    /// Bytes rendered elsewhere: copied into the buffer, or written straight
    /// through when they would fill it anyway.
    func write(_ bytes: Span<UInt8>) {
        bytes.withUnsafeBytes { write($0) }
    }

    func write(_ bytes: UnsafeRawBufferPointer) {
        if buffer.count + bytes.count >= 1 << 16 {
            flush()
            if bytes.count >= 1 << 15 {
                writeAll(bytes)
                return
            }
        }
        buffer.append(contentsOf: bytes)
    }

    func flush() {
        buffer.withUnsafeBytes { writeAll($0) }
        buffer.removeAll(keepingCapacity: true)
    }

    private func writeAll(_ bytes: UnsafeRawBufferPointer) {
        var offset = 0
        while offset < bytes.count {
            let written = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0, errno == EINTR { continue }
            if written <= 0 { break }
            offset += written
        }
    }
}
