import Foundation

/// A program run to its end, for the tests that drive a real peer's command-line tool
/// (`redis-cli`, `node`, `openssl`).
public enum Subprocess {
    public struct Finished: Sendable {
        public let status: Int32
        /// Standard output, and standard error too unless it was kept apart.
        public let output: [UInt8]
        /// Standard error, when it was kept apart; empty otherwise.
        public let errors: [UInt8]

        public var text: String { String(decoding: output, as: UTF8.self) }
        public var errorText: String { String(decoding: errors, as: UTF8.self) }
    }

    /// Runs `executable ARGUMENTS` in `directory` with no input. `separateErrors`: standard
    /// error in ``Finished/errors`` rather than mixed into the output.
    public static func run(
        _ executable: String,
        _ arguments: [String],
        in directory: URL? = nil,
        separateErrors: Bool = false
    ) throws -> Finished {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        let output = Pipe()
        let errors = separateErrors ? Pipe() : output
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Read before waiting: a full pipe would block the child.
        let out = output.fileHandleForReading.readDataToEndOfFile()
        let err = separateErrors ? errors.fileHandleForReading.readDataToEndOfFile() : Data()
        process.waitUntilExit()
        return Finished(status: process.terminationStatus, output: Array(out), errors: Array(err))
    }
}
