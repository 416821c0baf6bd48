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
/// input streams in, evaluated and rendered in batches, and written in input
/// order. Memory is two batches, whatever the input's length.
///
/// A batch is rendered in chunks of consecutive records, each chunk into one
/// buffer of bytes (no per-token output array). With `--jobs 1` this thread
/// renders each batch itself. With `--jobs N` N threads evaluate *and render*
/// a batch, claiming chunks as they go, while this thread cuts the next batch
/// and writes the one before — so neither input nor output is a serial step
/// the workers wait on.
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

    /// Records per chunk: enough to amortise a chunk's buffer and bookkeeping,
    /// few enough that N workers finish a batch at nearly the same time.
    static let chunkSize = 16

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
        let batchSize = Self.chunkSize * (jobs > 1 ? 8 * jobs : 4)
        var batch: [QueuedRecord] = []
        batch.reserveCapacity(batchSize)
        let renderer = ChunkRenderer(mode: mode, format: format, text: text, showSignedBytes: showSignedBytes, pool: pool)
        var inFlight: InFlightBatch? = nil

        if format == .json { output.write("[") }
        func write(_ chunks: [RenderedChunk]) {
            for chunk in chunks {
                chunk.withBytes { output.write($0) }
                for record in chunk.records {
                    summary.add(status: record.status, hasError: record.hasError, inspect: isInspect)
                }
            }
            progress.update(summary.total, errors: errors)
        }
        /// Writes the batch the workers were given last, once they are done with it.
        func drain() {
            if let previous = inFlight {
                inFlight = nil
                write(previous.wait())
            }
        }
        func flush() {
            let records = batch
            batch = []
            batch.reserveCapacity(batchSize)
            if jobs > 1 && records.count > Self.chunkSize {
                // Hand this batch to the workers first, then write the previous
                // one while they work on it.
                let started = InFlightBatch(records, jobs: jobs, renderer: renderer)
                drain()
                inFlight = started
            } else {
                drain()
                write([renderer.render(records[...])])
            }
        }

        for input in inputs {
            let source = input.name
            do {
                try input.forEachRecord(configuration: decoderConfiguration) { record in
                    var record = record
                    record.index = nextInput
                    nextInput += 1
                    batch.append(QueuedRecord(record: record, source: source))
                    if batch.count >= batchSize { flush() }
                }
            } catch {
                if !batch.isEmpty { flush() }
                drain()
                output.flush()
                errors.write("tokeninspect: error: \(error.description)\n")
                errors.flush()
                unreadable = true
            }
        }
        if !batch.isEmpty { flush() }
        drain()
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
}

/// A record cut from an INPUT, waiting to be evaluated.
struct QueuedRecord: Sendable {
    var record: TokenRecord
    /// How verdicts name the INPUT (`InputSource.name`).
    var source: String
}

/// The output of consecutive records, rendered into one buffer, and what the
/// summary counts for each of them.
final class RenderedChunk: @unchecked Sendable {
    // @unchecked: made whole by one thread, then handed over (after the
    // workers' group is left, which orders the accesses) and only read.
    private let output: JSONWriter
    let records: [Counted]

    struct Counted {
        var status: VerificationStatus?
        var hasError: Bool
    }

    init(output: consuming JSONWriter, records: [Counted]) {
        self.output = output
        self.records = records
    }

    func withBytes(_ body: (UnsafeRawBufferPointer) -> Void) {
        output.withBytes(body)
    }
}

/// Evaluates and renders records; safe to use from several threads at once.
struct ChunkRenderer: Sendable {
    var mode: TokenRun.Mode
    var format: OutputFormat
    var text: TextRenderer
    var showSignedBytes: Bool
    var pool: TokenDecoderPool

    func render(_ records: ArraySlice<QueuedRecord>) -> RenderedChunk {
        var output = JSONWriter(capacity: 2048 * max(1, records.count))
        var counted: [RenderedChunk.Counted] = []
        counted.reserveCapacity(records.count)
        // By index: `for queued in records` would copy (retain) each record.
        for index in records.indices {
            let outcome = evaluate(records[index].record, source: records[index].source)
            switch format {
            case .text:
                output.raw(text.block(outcome))
            case .json:
                // The array's separators: the first object of the run opens it.
                output.raw(outcome.input == 1 ? "\n" : ",\n")
                JSONRenderer.write(outcome, showSignedBytes: showSignedBytes, to: &output)
            case .jsonl:
                JSONRenderer.write(outcome, showSignedBytes: showSignedBytes, to: &output)
                output.raw("\n")
            }
            counted.append(RenderedChunk.Counted(status: outcome.status, hasError: outcome.error != nil))
        }
        return RenderedChunk(output: output, records: counted)
    }

    private func evaluate(_ record: TokenRecord, source: String) -> Outcome {
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
}

/// A batch being evaluated and rendered by `jobs` threads, in the background,
/// one chunk of ``TokenRun/chunkSize`` records at a time.
private final class InFlightBatch: @unchecked Sendable {
    // @unchecked: each slot is written exactly once, by one worker, and only
    // read after `wait()` saw every worker leave the group (which orders the accesses).
    private let slots: UnsafeMutableBufferPointer<RenderedChunk?>
    private let next = Atomic<Int>(0)
    private let group = DispatchGroup()

    init(_ records: [QueuedRecord], jobs: Int, renderer: ChunkRenderer) {
        let size = TokenRun.chunkSize
        let chunkCount = (records.count + size - 1) / size
        slots = .allocate(capacity: chunkCount)
        slots.initialize(repeating: nil)
        for _ in 0..<min(jobs, chunkCount) {
            DispatchQueue.global().async(group: group) { [self] in
                while true {
                    let chunk = next.add(1, ordering: .relaxed).oldValue
                    guard chunk < chunkCount else { break }
                    let start = chunk * size
                    slots[chunk] = renderer.render(records[start..<min(start + size, records.count)])
                }
            }
        }
    }

    deinit {
        slots.deinitialize()
        slots.deallocate()
    }

    /// Blocks until every chunk is rendered; the chunks in input order.
    func wait() -> [RenderedChunk] {
        group.wait()
        return slots.map { $0! }
    }
}

/// The closing count per status.
struct RunSummary {
    private(set) var total = 0
    private(set) var failures = 0
    private var counts: [String: Int] = [:]
    private var order: [String] = []

    mutating func add(status: VerificationStatus?, hasError: Bool, inspect: Bool) {
        total += 1
        let name = status?.rawValue ?? "DECODED"
        if counts[name] == nil { order.append(name) }
        counts[name, default: 0] += 1
        let failed = inspect ? hasError : status != .validToken
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
