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
        #expect(
            generated.stdout == committed,
            "regenerate: tokeninspect --generate-completion-script \(shell) > \(path)"
        )
    }

    /// The binary's answer (`---complete CWORD WORD...`), which every script offers.
    static func candidates(_ cword: Int, _ words: [String]) throws -> [String] {
        let result = try CLI.run(["---complete", String(cword)] + words)
        #expect(result.status == 0, "\(result.stderr)")
        return result.stdout.split(separator: "\n").map(String.init)
    }

    @Test func atPathCompletesFilesKeepingTheAt() throws {
        // zsh and fish hand over the whole word, '@' included.
        #expect(try Self.candidates(2, ["tokeninspect", "verify", "@Samples/tok"]) == [":words", "@Samples/tokens/"])
        // bash splits '@' into a word of its own.
        #expect(try Self.candidates(3, ["tokeninspect", "verify", "@", "Samples/tok"]) == [":words", "@Samples/tokens/"])
        // A token being typed is not a path.
        #expect(try Self.candidates(2, ["tokeninspect", "verify", "PHN"]) == [":words"])
    }

    /// A file name holding a newline, an escape sequence, a C1 control or bytes that are not UTF-8 is
    /// never offered: one candidate per file, and no control byte reaches the terminal or the command line.
    @Test func hostileFileNamesAreSkippedOneCandidatePerFile() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("completion-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let hostile = ["a\n--insecure-skip-signature", "b\u{1B}]52;c;ZXZpbA==\u{07}", "c\u{9B}31m", "d\rx", "e\u{7F}"]
        for name in hostile + ["plain.txt", "é-accent.txt"] {
            #expect(FileManager.default.createFile(atPath: directory.appendingPathComponent(name).path, contents: Data()), "\(name)")
        }
        // Bytes that are not UTF-8 (0xFF): made through the C library, as Foundation writes names as UTF-8.
        let raw = directory.path + "/f"
        let invalid = Array(raw.utf8) + [0xFF, 0]
        let fd = invalid.withUnsafeBufferPointer {
            open(UnsafeRawPointer($0.baseAddress!).assumingMemoryBound(to: CChar.self), O_CREAT | O_WRONLY, 0o600)
        }
        #expect(fd >= 0)
        close(fd)
        let offered = try Self.candidates(2, ["tokeninspect", "verify", "@\(directory.path)/"])
        #expect(offered == [":words", "@\(directory.path)/plain.txt", "@\(directory.path)/é-accent.txt"], "\(offered)")
        // The reply holds no control byte at all.
        let reply = try CLI.run(["---complete", "2", "tokeninspect", "verify", "@\(directory.path)/"]).stdout
        #expect(
            !reply.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" || ($0.value >= 0x7F && $0.value <= 0x9F) },
            "\(reply.debugDescription)"
        )
    }

    /// bash's script hands an option's path to readline's own file completion (one candidate a file,
    /// quoted by readline) instead of splitting compgen's lines.
    @Test func bashLeavesPathsToReadline() throws {
        let script = try String(contentsOf: CLI.packageRoot.appendingPathComponent("completions/tokeninspect.bash"), encoding: .utf8)
        #expect(script.contains("compopt -o default") && !script.contains("compgen -f"), "\(script)")
    }

    @Test func aMalformedRequestGetsNothingAndAnUnknownShellAUsageError() throws {
        // What a shell passes is input too: a cursor that is not a number or lies past the words offers nothing.
        #expect(try Self.candidates(9, ["tokeninspect", "verify"]) == [":words"])
        #expect(try CLI.run(["---complete", "x", "tokeninspect", "--"]).stdout == ":words\n")
        #expect(try CLI.run(["---complete"]).stdout == ":words\n")
        let shell = try CLI.run(["--generate-completion-script", "tcsh"])
        #expect(shell.status == 64)
        #expect(shell.stderr.contains("--generate-completion-script takes one of: bash, zsh, fish"), "\(shell.stderr)")
        #expect(try CLI.run(["--generate-completion-script"]).status == 64)
    }

    @Test func optionsValuesAndSubcommandsComeFromTheCommandsOwnDeclarations() throws {
        #expect(try Self.candidates(2, ["tokeninspect", "verify", "--fo"]) == [":words", "--format"])
        #expect(try Self.candidates(3, ["tokeninspect", "verify", "--format", "j"]) == [":words", "json", "jsonl"])
        #expect(try Self.candidates(3, ["tokeninspect", "verify", "--key", "Sam"]) == [":files"])
        // An option that takes one value is not offered again; a repeatable one is.
        let again = try Self.candidates(4, ["tokeninspect", "verify", "--now", "1", "--"])
        #expect(!again.contains("--now") && again.contains("--key") && again.contains("--help"), "\(again)")
        #expect(try Self.candidates(1, ["tokeninspect", "m"]) == [":words", "mint", "metadata", "manifest"])
        // mint's default subcommand: its options without naming it, beside the subcommands.
        #expect(try Self.candidates(2, ["tokeninspect", "mint", "s"]) == [":words", "software-statement", "signed-requestor-id"])
        #expect(try Self.candidates(2, ["tokeninspect", "mint", "--req"]) == [":words", "--requestor"])
        #expect(try Self.candidates(3, ["tokeninspect", "mint", "cdn", "--pro"]) == [":words", "--profile"])
        // bash splits `--format=` at '='.
        #expect(try Self.candidates(4, ["tokeninspect", "verify", "--format", "=", "t"]) == [":words", "text"])
    }

    /// fish's own completion machinery (`complete -C`), without a terminal.
    @Test func fishCompletesOptionsKeyPathsAndAtPaths() throws {
        let fish = "/usr/bin/fish"
        try #require(FileManager.default.isExecutableFile(atPath: fish), "fish is needed (apt-get install fish)")
        let bin = CLI.binary.deletingLastPathComponent().path
        func completed(_ typed: String) throws -> [String] {
            let script = "set PATH '\(bin)' $PATH; source completions/tokeninspect.fish; complete -C'\(typed)'"
            let result = try CLI.run([], shell: [fish, "--no-config", "-c", script])
            return result.stdout.split(separator: "\n").map { String($0.split(separator: "\t").first ?? "") }
        }
        #expect(try completed("tokeninspect verify --fo") == ["--format"])
        #expect(try completed("tokeninspect verify --format js").contains("json"))
        #expect(try completed("tokeninspect verify --key Samples/ke").contains("Samples/keys/"))
        #expect(try completed("tokeninspect verify @Samples/tok").contains("@Samples/tokens/"))
    }

    /// bash and zsh under tmux (a pty, the line editor, the real completion machinery).
    @Test(arguments: ["bash", "zsh"]) func completesKeyAndAtPathAtARealTerminal(shell: String) throws {
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
            defer { for pointer in argv { free(pointer) } }
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
        let root = CLI.packageRoot.path
        let (program, setUp) =
            shell == "bash"
            ? ("bash --norc --noprofile", "source completions/tokeninspect.bash")
            : ("zsh -f", "fpath=('\(root)/completions' $fpath) && autoload -U compinit && compinit -u -D")
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/\(shell)"), "\(shell) is needed (apt-get install \(shell))")
        try run([
            "new-session", "-d", "-s", "t", "-x", "200", "-y", "10",
            "env -i PATH=\(bin):/usr/bin:/bin HOME=/tmp TERM=xterm \(program)",
        ])
        try run(["send-keys", "-t", "t", "cd '\(root)' && \(setUp) && clear", "Enter"])

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
