import Foundation
import Testing

/// Runs the real `tokeninspect` binary, the way users and scripts do.
enum CLI {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The binary SwiftPM built next to this test bundle.
    static let binary: URL = {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("tokeninspect")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return packageRoot.appendingPathComponent(".build/debug/tokeninspect")
    }()

    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
        /// Peak resident memory of tokeninspect, in KiB, when measured (`measuresMemory`).
        var maxRSSKiB: Int
    }

    /// Runs with `arguments` from the package root, stdin from `stdin` text, a file, or /dev/null.
    ///
    /// Memory is measured through GNU time, not this process's wait4: posix_spawn
    /// starts children with vfork, and Linux charges the parent's RSS high-water
    /// (this test runner's, ~100 MB) to a vfork child when it execs. GNU time
    /// really forks, from a process of a few MB, so its figure is tokeninspect's own.
    static func run(
        _ arguments: [String],
        stdin: String? = nil,
        stdinFile: String? = nil,
        environment: [String: String] = [:],
        measuresMemory: Bool = false,
        shell: [String]? = nil
    ) throws -> Result {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("tokeninspect-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let outPath = scratch.appendingPathComponent("stdout").path
        let errPath = scratch.appendingPathComponent("stderr").path
        var inPath = stdinFile ?? "/dev/null"
        if let stdin {
            inPath = scratch.appendingPathComponent("stdin").path
            try Data(stdin.utf8).write(to: URL(fileURLWithPath: inPath))
        }
        var env = ProcessInfo.processInfo.environment
        env["COLUMNS"] = "100"
        env.removeValue(forKey: "NO_COLOR")
        for (key, value) in environment { env[key] = value }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, inPath, O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        // Through sh only to change directory (per child, not per process: tests run
        // in parallel); `exec` replaces the shell, so wait4 measures tokeninspect itself.
        let rssPath = scratch.appendingPathComponent("rss").path
        let timing = measuresMemory ? ["/usr/bin/time", "-f", "%M", "-o", rssPath] : []
        // `shell`: another program (a script's interpreter) in place of the binary.
        let argv =
            (["/bin/sh", "-c", "cd \"$0\" && exec \"$@\"", packageRoot.path] + timing + (shell ?? [binary.path] + arguments))
            .map { strdup($0) } + [nil]
        let envp = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, "/bin/sh", &actions, nil, argv, envp)
        try #require(spawned == 0, "posix_spawn failed: \(spawned)")
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
        let exit: Int32 = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        let rss =
            measuresMemory
            ? try String(contentsOfFile: rssPath, encoding: .utf8)
                .split(separator: "\n").last.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) } : nil
        return Result(
            status: exit,
            stdout: (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "",
            maxRSSKiB: rss ?? 0
        )
    }

    /// The flags Samples/README.md verifies every sample with.
    static let sampleFlags = [
        "--key", "Samples/keys/trusted", "--now", "2026-01-15T12:03:00Z", "--requestor", "TNT",
        "--resource", "TNT", "--mvpd", "Comcast_SSO", "--device-id", "samples-device-1", "--reject-replays",
    ]

    static func jsonLines(_ text: String) throws -> [[String: Any]] {
        try text.split(separator: "\n").map { line in
            try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
    }
}
