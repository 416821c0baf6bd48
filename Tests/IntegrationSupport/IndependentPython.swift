import Foundation

/// The Python with the independent implementations the cross-check tests use
/// (docs/DESIGN.md#hostile-credentials: PyJWT and `cryptography` from PyPI), found as `scripts/test` leaves it:
/// `$TOKENINSPECT_PYTHON`, else the venv at `$TOKENINSPECT_VENV` or
/// `~/.cache/tokeninspect-venv`. A test that needs a module is skipped, naming the
/// package to install, unless `TOKENINSPECT_INTEGRATION=require` (then it fails).
public enum IndependentPython {
    public static let path: String? = {
        let environment = ProcessInfo.processInfo.environment
        var candidates: [String] = []
        if let python = environment["TOKENINSPECT_PYTHON"], !python.isEmpty { candidates.append(python) }
        let venv =
            environment["TOKENINSPECT_VENV"].flatMap { $0.isEmpty ? nil : $0 }
            ?? (NSHomeDirectory() + "/.cache/tokeninspect-venv")
        candidates.append(venv + "/bin/python3")
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    /// True when `path` imports every module in `modules`.
    public static func has(_ modules: [String]) -> Bool {
        guard let path else { return false }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = ["-c", modules.map { "import \($0)" }.joined(separator: "; ")]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            return false
        }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }

    /// For `.enabled(if: IndependentPython.available(["jwt", "cryptography"]), "…")`:
    /// true when the modules import, or when integration is required (the test then fails loudly).
    public static func available(_ modules: [String]) -> Bool {
        has(modules) || Integration.required
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Runs `script` with `arguments`, feeding `input`; returns stdout. Throws with stderr on failure.
    public static func run(_ script: String, arguments: [String] = [], input: String = "") throws -> String {
        guard let path else {
            throw Failure(
                description:
                    "no Python venv with the independent implementations (run scripts/test, or pip install PyJWT cryptography into ~/.cache/tokeninspect-venv)"
            )
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = ["-c", script] + arguments
        let stdin = Pipe()
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        let errors = stderr.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(description: "python exited \(process.terminationStatus): \(String(decoding: errors, as: UTF8.self))")
        }
        return String(decoding: output, as: UTF8.self)
    }
}
