import Foundation
import Testing

/// Shell completion (docs/DESIGN.md#the-cli-contract, issue 15): the committed scripts are what the
/// binary generates, and a real bash at a real terminal completes files after
/// `--key` and after `@`.
@Suite struct CompletionTests {
    @Test(arguments: [("bash", "completions/tokeninspect.bash"), ("zsh", "completions/_tokeninspect"), ("fish", "completions/tokeninspect.fish")])
    func committedScriptsAreUpToDate(shell: String, path: String) throws {
        let generated = try CLI.run(["--generate-completion-script", shell])
        #expect(generated.status == 0)
        let committed = try String(contentsOf: CLI.packageRoot.appendingPathComponent(path), encoding: .utf8)
        #expect(generated.stdout == committed,
                "regenerate: tokeninspect --generate-completion-script \(shell) > \(path)")
    }

    @Test func atPathCompletesFilesKeepingTheAt() throws {
        // zsh and fish hand over the whole word, '@' included.
        let whole = try CLI.run(["---completion", "verify", "--", "positional@0", "2", "12", "tokeninspect", "verify", "@Samples/tok"],
                                environment: ["SAP_SHELL": "zsh"])
        #expect(whole.stdout.split(separator: "\n").contains("@Samples/tokens/"), "\(whole.stdout)\(whole.stderr)")
        // bash splits '@' into a word of its own.
        let split = try CLI.run(["---completion", "verify", "--", "positional@0", "3", "11", "tokeninspect", "verify", "@", "Samples/tok"],
                                environment: ["SAP_SHELL": "bash"])
        #expect(split.stdout.split(separator: "\n").contains("@Samples/tokens/"), "\(split.stdout)\(split.stderr)")
        // A token being typed is not a path.
        let token = try CLI.run(["---completion", "verify", "--", "positional@0", "2", "3", "tokeninspect", "verify", "PHN"],
                                environment: ["SAP_SHELL": "zsh"])
        #expect(token.stdout.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty)
    }

    /// `bash` under tmux (a pty, readline, the real completion machinery).
    @Test func bashCompletesKeyAndAtPathAtARealTerminal() throws {
        let tmux = "/usr/bin/tmux"
        try #require(FileManager.default.isExecutableFile(atPath: tmux), "tmux is needed (apt-get install tmux)")
        let socket = "tokeninspect-test-\(UUID().uuidString.prefix(8))"
        /// posix_spawn and wait4, output to a file: Foundation's Process never
        /// saw the tmux client end once the server it starts had daemonized.
        @discardableResult
        func run(_ arguments: [String]) throws -> String {
            let output = FileManager.default.temporaryDirectory.appendingPathComponent("tmux-\(UUID().uuidString)").path
            defer { try? FileManager.default.removeItem(atPath: output) }
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
            let argv = ([tmux, "-L", socket] + arguments).map { strdup($0) } + [nil]
            defer { argv.forEach { free($0) } }
            // The test runner's threads block signals; a tmux server that inherited
            // that mask would ignore kill-server's shutdown and outlive the test.
            var attributes = posix_spawnattr_t()
            posix_spawnattr_init(&attributes)
            defer { posix_spawnattr_destroy(&attributes) }
            var noSignals = sigset_t()
            sigemptyset(&noSignals)
            posix_spawnattr_setsigmask(&attributes, &noSignals)
            posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
            var pid: pid_t = 0
            try #require(posix_spawn(&pid, tmux, &actions, &attributes, argv, environ) == 0)
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            return (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        }
        defer { _ = try? run(["kill-server"]) }
        let bin = CLI.binary.deletingLastPathComponent().path
        try run(["new-session", "-d", "-s", "t", "-x", "200", "-y", "10",
                 "env -i PATH=\(bin):/usr/bin:/bin HOME=/tmp TERM=xterm bash --norc --noprofile"])
        try run(["send-keys", "-t", "t", "cd '\(CLI.packageRoot.path)' && source completions/tokeninspect.bash && clear", "Enter"])

        func completed(_ typed: String, expecting: String) throws -> String {
            try run(["send-keys", "-t", "t", "C-u", typed])
            Thread.sleep(forTimeInterval: 0.3)
            try run(["send-keys", "-t", "t", "Tab"])
            var screen = ""
            for _ in 0..<50 {  // up to 5 s: the completion runs the binary
                Thread.sleep(forTimeInterval: 0.1)
                screen = try run(["capture-pane", "-t", "t", "-p"])
                if screen.contains(expecting) { break }
            }
            return screen
        }
        let key = try completed("tokeninspect verify --key Sam", expecting: "--key Samples/")
        #expect(key.contains("tokeninspect verify --key Samples/"), "\(key)")
        // readline escapes the '@' of a file name (`\@`); the shell reads it back as '@'.
        let at = try completed("tokeninspect verify @Samples/tok", expecting: "Samples/tokens/")
        #expect(at.contains("@Samples/tokens/"), "\(at)")
    }
}
