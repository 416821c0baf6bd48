#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What the process is connected to, decided once: colour only for a person
/// at a terminal who has not asked for none (https://no-color.org).
struct Terminal: Sendable {
    var stdoutIsTerminal: Bool
    var stderrIsTerminal: Bool
    var stdinIsTerminal: Bool
    var noColor: Bool

    static let current = Terminal(
        stdoutIsTerminal: isatty(STDOUT_FILENO) == 1,
        stderrIsTerminal: isatty(STDERR_FILENO) == 1,
        stdinIsTerminal: isatty(STDIN_FILENO) == 1,
        noColor: getenv("NO_COLOR").map { $0.pointee != 0 } ?? false
    )

    var usesColor: Bool { stdoutIsTerminal && !noColor }
}

/// ANSI styles, or nothing when colour is off.
struct Style: Sendable {
    let enabled: Bool

    func green(_ text: String) -> String { wrap(text, "32;1") }
    func red(_ text: String) -> String { wrap(text, "31;1") }
    func yellow(_ text: String) -> String { wrap(text, "33;1") }
    func dim(_ text: String) -> String { wrap(text, "2") }
    func bold(_ text: String) -> String { wrap(text, "1") }

    private func wrap(_ text: String, _ code: String) -> String {
        enabled ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text
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

    func write(_ text: String) {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= 1 << 16 { flush() }
    }

    /// Bytes rendered elsewhere: copied into the buffer, or written straight
    /// through when they would fill it anyway.
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
