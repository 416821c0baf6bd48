import EntitlementTokens

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

enum OutputFormat: String, CaseIterable, Sendable {
    case text, json, jsonl
}

/// One run of `inspect` or `verify` over every INPUT: the records of each
/// input go through the library's ``VerificationStream`` as they are cut, and
/// its output to stdout; then the summary and the exit status.
struct TokenRun {
    var mode: VerificationStream.Mode
    var inputs: [InputSource]
    var format: OutputFormat
    var jobs: Int
    var decoderConfiguration: DecoderConfiguration
    var now: TokenTimestamp
    var showSignedBytes: Bool
    var color: ColorChoice = .auto
    var terminal = Terminal.current

    /// Exit status per docs/DESIGN.md#exit-codes: 0 all good, 1 a token failed, 2 nothing usable.
    func run() -> Int32 {
        let output = OutputStream.standardOutput
        let errors = OutputStream.standardError
        let style = TextStyle(colored: terminal.usesColor(color))
        var progress = ProgressLine(enabled: terminal.stderrIsTerminal && (format != .text || !terminal.stdoutIsTerminal))

        let detailed: Bool
        if case .inspect = mode { detailed = true } else { detailed = false }
        let streamFormat: VerificationStream.Format =
            switch format {
            case .text: .text(TextReportOptions(style: style, now: now, detailed: detailed, showSignedBytes: showSignedBytes))
            case .json: .json(showSignedBytes: showSignedBytes)
            case .jsonl: .jsonl(showSignedBytes: showSignedBytes)
            }
        let stream = VerificationStream(
            mode: mode,
            format: streamFormat,
            limits: .init(jobs: jobs),
            decoderConfiguration: decoderConfiguration
        ) { bytes in
            output.write(bytes)
        }
        let unreadable = inputs.forEachRecord(configuration: decoderConfiguration, output: output, errors: errors) { input, record in
            stream.add(record, source: input.name)
            progress.update(stream.summary.total, errors: errors)
        }
        stream.finish()
        output.flush()
        progress.clear(errors: errors)

        let summary = stream.summary
        if summary.total == 0 && !unreadable {
            errors.write("tokeninspect: error: no token found in the input\n")
            errors.flush()
            return 2
        }
        if summary.total > 0 {
            // For people with the text; on stderr when stdout carries JSON.
            let line = summary.text(style: format == .text ? style : TextStyle(colored: false))
            let stream = format == .text ? output : errors
            stream.write("\(line)\n")
            stream.flush()
        }
        if unreadable { return 2 }
        return summary.failures > 0 ? 1 : 0
    }
}

/// A progress line on stderr for long runs, only when stderr is a terminal
/// (and stdout is not, or carries JSON), redrawn at most five times a second.
struct ProgressLine {
    var enabled: Bool
    private var started = ProgressLine.monotonicMilliseconds()
    private var lastDrawn: Int64 = 0
    private var drawn = false

    init(enabled: Bool) { self.enabled = enabled }

    mutating func update(_ count: Int, errors: OutputStream) {
        guard enabled else { return }
        let now = Self.monotonicMilliseconds()
        guard now - started > 1000, now - lastDrawn > 200 else { return }
        lastDrawn = now
        drawn = true
        errors.write("\r\u{1B}[K  \(count) tokens…")
        errors.flush()
    }

    func clear(errors: OutputStream) {
        guard drawn else { return }
        errors.write("\r\u{1B}[K")
        errors.flush()
    }

    static func monotonicMilliseconds() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000
    }
}
