import EntitlementTokens
import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

enum OutputFormat: String, CaseIterable, Sendable {
    case text, json, jsonl
}

/// One run of `inspect` or `verify` over every INPUT: records are cut as the
/// input streams in, evaluated in batches (in parallel with `--jobs`), and
/// written in input order. Memory is one batch, whatever the input's length.
struct TokenRun {
    enum Mode {
        /// Decode and show; verify too when a verifier is given.
        case inspect(TokenVerifier?)
        case verify(TokenVerifier)
    }

    var mode: Mode
    var inputs: [InputSource]
    var format: OutputFormat
    var jobs: Int
    var decoderConfiguration: DecoderConfiguration
    var now: TokenTimestamp
    var showSignedBytes: Bool
    var terminal = Terminal.current

    /// Exit status per SPEC §6: 0 all good, 1 a token failed, 2 nothing usable.
    func run() -> Int32 {
        let pool = TokenDecoderPool(configuration: decoderConfiguration)
        let output = OutputStream.standardOutput
        let errors = OutputStream.standardError
        let text = TextRenderer(style: Style(enabled: terminal.usesColor), now: now, detailed: isInspect, showSignedBytes: showSignedBytes)
        var summary = RunSummary()
        var progress = ProgressLine(enabled: terminal.stderrIsTerminal && format != .text || terminal.stderrIsTerminal && !terminal.stdoutIsTerminal)
        var unreadable = false
        var nextInput = 1
        var batch: [(TokenRecord, String)] = []
        let batchSize = max(64, 256 * jobs)

        if format == .json { output.write("[") }
        func flush() {
            let outcomes = evaluate(batch, pool: pool)
            batch.removeAll(keepingCapacity: true)
            for outcome in outcomes {
                switch format {
                case .text:
                    output.write(text.block(outcome))
                case .json:
                    output.write((summary.total == 0 ? "\n" : ",\n") + JSONRenderer.object(outcome, showSignedBytes: showSignedBytes))
                case .jsonl:
                    output.write(JSONRenderer.object(outcome, showSignedBytes: showSignedBytes) + "\n")
                }
                summary.add(outcome, inspect: isInspect)
            }
            progress.update(summary.total, errors: errors)
        }

        for input in inputs {
            do {
                try input.forEachRecord(configuration: decoderConfiguration) { record in
                    var record = record
                    record.index = nextInput
                    nextInput += 1
                    batch.append((record, input.name))
                    if batch.count >= batchSize { flush() }
                }
            } catch {
                if !batch.isEmpty { flush() }
                output.flush()
                errors.write("tokeninspect: error: \(error.description)\n")
                errors.flush()
                unreadable = true
            }
        }
        if !batch.isEmpty { flush() }
        if format == .json { output.write(summary.total == 0 ? "]\n" : "\n]\n") }
        output.flush()
        progress.clear(errors: errors)

        if summary.total == 0 && !unreadable {
            errors.write("tokeninspect: error: no token found in the input\n")
            errors.flush()
            return 2
        }
        let line = summary.line(style: format == .text ? text : nil)
        if format == .text, summary.total > 0 {
            output.write(line + "\n")
            output.flush()
        } else if summary.total > 0 {
            errors.write(line + "\n")
            errors.flush()
        }
        if unreadable { return 2 }
        return summary.failures > 0 ? 1 : 0
    }

    private var isInspect: Bool {
        if case .inspect = mode { return true }
        return false
    }

    /// Outcomes in input order; with `jobs` > 1 the work is spread over that many threads.
    private func evaluate(_ batch: [(TokenRecord, String)], pool: TokenDecoderPool) -> [Outcome] {
        let mode = self.mode
        @Sendable func outcome(_ record: TokenRecord, _ source: String) -> Outcome {
            var outcome = Outcome(input: record.index, source: source, line: record.line)
            switch mode {
            case .verify(let verifier):
                let verdict = verifier.verify(record)
                outcome.verdict = verdict
                outcome.token = verdict.token
                outcome.error = verdict.formatError
            case .inspect(let verifier):
                switch pool.decode(record) {
                case .success(let token):
                    outcome.token = token
                    outcome.verdict = verifier?.verify(token)
                case .failure(let error):
                    outcome.error = error
                    outcome.verdict = verifier.map { _ in TokenVerifier.formatVerdict(error) }
                }
            }
            return outcome
        }
        guard jobs > 1, batch.count > 1 else { return batch.map { outcome($0.0, $0.1) } }
        let results = ResultSlots(count: batch.count)
        let next = Atomic<Int>(0)
        let items = batch
        DispatchQueue.concurrentPerform(iterations: min(jobs, batch.count)) { _ in
            while true {
                let index = next.add(1, ordering: .relaxed).oldValue
                guard index < items.count else { break }
                results.set(index, outcome(items[index].0, items[index].1))
            }
        }
        return results.values
    }
}

/// Slots written by one thread each, read after every writer finished.
private final class ResultSlots: @unchecked Sendable {
    // @unchecked: each index is written exactly once, by one thread, and only
    // read after `concurrentPerform` returned (which orders the accesses).
    private var storage: [Outcome?]
    init(count: Int) { storage = Array(repeating: nil, count: count) }
    func set(_ index: Int, _ value: Outcome) { storage[index] = value }
    var values: [Outcome] { storage.map { $0! } }
}

/// The closing count per status.
struct RunSummary {
    private(set) var total = 0
    private(set) var failures = 0
    private var counts: [String: Int] = [:]
    private var order: [String] = []

    mutating func add(_ outcome: Outcome, inspect: Bool) {
        total += 1
        let name = outcome.status?.rawValue ?? "DECODED"
        if counts[name] == nil { order.append(name) }
        counts[name, default: 0] += 1
        let failed = inspect ? outcome.error != nil : outcome.status != .validToken
        if failed { failures += 1 }
    }

    func line(style: TextRenderer?) -> String {
        let ordered = order.sorted { lhs, rhs in
            let rank = { (name: String) in VerificationStatus.allCases.firstIndex { $0.rawValue == name } ?? -1 }
            return rank(lhs) < rank(rhs)
        }
        let parts = ordered.map { name -> String in
            let label = VerificationStatus(rawValue: name).map { style?.colored($0) ?? $0.rawValue } ?? name
            return "\(counts[name]!) \(label)"
        }
        return "\(total) token\(total == 1 ? "" : "s"): " + parts.joined(separator: ", ")
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
