internal import Dispatch
internal import Synchronization

/// Ordered, parallel verification (or inspection) of a stream of records,
/// rendered as text or JSON: the engine behind `tokeninspect verify` and
/// `inspect`, and behind a service's batch endpoint (docs/DESIGN.md#the-library-api-for-servers).
///
/// Records go in with ``add(_:source:)`` as they are cut from the input;
/// their rendered output comes out through `write`, on the calling thread, in
/// input order. With `jobs` > 1, records are gathered into batches and a
/// batch is evaluated *and rendered* by `jobs` threads, a chunk of
/// consecutive records at a time, while the calling thread cuts the next
/// batch and writes the one before.
///
/// Memory is bounded in bytes, whatever `jobs` and the record sizes: a batch
/// is handed over once it holds ``Limits/batchBytes`` of input (or
/// ``Limits/batchRecords`` records), a chunk ends at ``Limits/chunkBytes``,
/// and at most two batches are alive — the one being filled and the one the
/// workers have.
///
/// Replays are decided in input order, so the first copy of a token is the
/// one accepted whatever `jobs` is: workers verify everything up to the
/// replay check, and the calling thread asks the replay store for each token
/// in input order as it writes; a chunk whose tokens the store refuses is
/// rendered again with the settled verdicts (rare: only replays).
public final class VerificationStream {
    /// What to do with each record: decode and show, or verify.
    public enum Mode: Sendable {
        /// Decode and show; verify too when a verifier is given (no per-request expectations).
        case inspect(TokenVerifier?)
        /// A verdict per token, every token against the same expectations.
        case verify(TokenVerifier, RequestExpectations)
    }

    /// How each report is rendered.
    public enum Format: Sendable {
        /// For people (``TokenReport/text(_:)``).
        case text(TextReportOptions)
        /// One JSON array of report objects (docs/DESIGN.md#output-forms).
        case json(showSignedBytes: Bool)
        /// One report object per line (docs/DESIGN.md#output-forms).
        case jsonl(showSignedBytes: Bool)
    }

    /// How much work runs at once.
    public struct Limits: Sendable {
        /// Threads that evaluate and render records (1: the calling thread does).
        public var jobs: Int
        /// Input bytes after which a batch is handed to the workers.
        public var batchBytes: Int = 2 << 20
        /// Records after which a batch is handed to the workers: eight chunks
        /// per job keep every worker busy while the batch before is written;
        /// more would only hold more rendered output.
        public var batchRecords: Int
        /// Input bytes after which a chunk (one worker's unit) ends.
        public var chunkBytes: Int = 128 << 10
        /// Records after which a chunk ends: enough to amortise a chunk's
        /// buffer and bookkeeping, few enough that workers finish together.
        public var chunkRecords: Int = 16

        /// Limits for `jobs` threads.
        public init(jobs: Int = 1) {
            self.jobs = max(1, jobs)
            batchRecords = min(4096, chunkRecords * 8 * max(1, jobs))
        }
    }

    private let evaluator: RecordEvaluator
    private let limits: Limits
    private let write: (Span<UInt8>) -> Void
    private var batch: [QueuedRecord] = []
    private var batchBytes = 0
    private var inFlight: InFlightBatch?
    private var nextIndex = 1
    private var finished = false
    /// The count per status so far.
    public private(set) var summary: StreamSummary

    /// - Parameter mode: `inspect` (with an optional verifier) or `verify`.
    /// - Parameter format: text, a JSON array or JSON lines.
    /// - Parameter limits: how many threads, and how many bytes may wait.
    /// - Parameter write: receives the rendered output, in input order, on
    ///   the thread that calls ``add(_:source:)`` and ``finish()``.
    /// - Parameter decoderConfiguration: for `inspect` without a verifier
    ///   (a verifier decodes with its own).
    public init(
        mode: Mode,
        format: Format,
        limits: Limits = Limits(),
        decoderConfiguration: DecoderConfiguration = .default,
        write: @escaping (Span<UInt8>) -> Void
    ) {
        let decoders: TokenDecoderPool
        switch mode {
        case .verify(let verifier, _), .inspect(let verifier?): decoders = verifier.decoders
        case .inspect(nil): decoders = TokenDecoderPool.shared(for: decoderConfiguration)
        }
        evaluator = RecordEvaluator(mode: mode, format: format, decoders: decoders)
        self.limits = limits
        self.write = write
        if case .inspect = mode { summary = StreamSummary(inspect: true) } else { summary = StreamSummary(inspect: false) }
        if case .json = format { emit("[") }
    }

    /// Queues one record; its index in the stream is assigned here.
    public func add(_ record: TokenRecord, source: String) {
        precondition(!finished, "add(_:source:) after finish()")
        var record = record
        record.index = nextIndex
        nextIndex += 1
        batchBytes += record.bytes.count
        batch.append(QueuedRecord(record: record, source: source))
        if batchBytes >= limits.batchBytes || batch.count >= limits.batchRecords { flush() }
    }

    /// Writes what is still queued (and the JSON array's end).
    public func finish() {
        guard !finished else { return }
        finished = true
        if !batch.isEmpty { flush() }
        drain()
        if case .json = evaluator.format { emit(summary.total == 0 ? "]\n" : "\n]\n") }
    }

    /// Hands the batch over: to the workers (writing the previous batch while
    /// they work), or, with one job or a small batch, evaluated right here.
    private func flush() {
        let records = batch
        batch = []
        batchBytes = 0
        let chunks = Self.chunks(of: records, limits: limits)
        if limits.jobs > 1 && chunks.count > 1 {
            let started = InFlightBatch(records, chunks: chunks, jobs: limits.jobs, evaluator: evaluator)
            drain()
            inFlight = started
        } else {
            drain()
            for range in chunks { deliver(evaluator.render(records[range], settlingReplays: true)) }
        }
    }

    private func drain() {
        guard let previous = inFlight else { return }
        inFlight = nil
        for chunk in previous.wait() { deliver(chunk) }
    }

    private func deliver(_ chunk: RenderedChunk) {
        let chunk = evaluator.settleReplays(chunk)
        chunk.withBytes(write)
        for status in chunk.statuses { summary.add(status) }
    }

    /// The few bytes around the records (`[`, `]`): once per stream.
    private func emit(_ text: String) {
        let bytes = Array(text.utf8)
        write(bytes.span)
    }

    /// Consecutive records cut by count and by bytes.
    static func chunks(of records: [QueuedRecord], limits: Limits) -> [Range<Int>] {
        var chunks: [Range<Int>] = []
        var start = 0
        var bytes = 0
        for index in records.indices {
            bytes += records[index].record.bytes.count
            if index + 1 - start >= limits.chunkRecords || bytes >= limits.chunkBytes {
                chunks.append(start..<index + 1)
                start = index + 1
                bytes = 0
            }
        }
        if start < records.count { chunks.append(start..<records.count) }
        return chunks
    }
}

/// A record cut from an input, waiting to be evaluated.
struct QueuedRecord: Sendable {
    var record: TokenRecord
    /// How reports name the input.
    var source: String
}

/// The output of consecutive records, rendered into one buffer, with each
/// record's status for the summary and — when replays are still to be
/// decided — the reports to render again if the store refuses one.
final class RenderedChunk: @unchecked Sendable {
    // @unchecked: made whole by one thread, then handed over (after the
    // workers' group is left, which orders the accesses) and only read.
    private let output: JSONWriter
    let statuses: [VerificationStatus?]
    /// Set only when some record awaits its replay decision.
    let pending: PendingReplays?

    struct PendingReplays {
        var reports: [TokenReport]
        /// Position in `reports`, what to ask the store.
        var questions: [(position: Int, replay: TokenVerifier.PendingReplay)]
        /// The JSON array separator state of the first record.
        var firstInput: Int
    }

    init(output: consuming JSONWriter, statuses: [VerificationStatus?], pending: PendingReplays?) {
        self.output = output
        self.statuses = statuses
        self.pending = pending
    }

    func withBytes(_ body: (Span<UInt8>) -> Void) {
        output.withSpan(body)
    }
}

/// Evaluates and renders records; safe to use from several threads at once.
struct RecordEvaluator: Sendable {
    var mode: VerificationStream.Mode
    var format: VerificationStream.Format
    var decoders: TokenDecoderPool

    /// Evaluates and renders `records`. With `settlingReplays`, replays are
    /// decided here, in order (the caller is the only thread evaluating);
    /// otherwise tokens awaiting the replay store are rendered as if accepted
    /// and listed in the chunk for ``settleReplays(_:)``.
    func render(_ records: ArraySlice<QueuedRecord>, settlingReplays: Bool) -> RenderedChunk {
        // A token's object is about 2 KB, and escaping reserves room for its
        // worst case before writing: 3 KB each keeps a chunk in its first buffer.
        var output = JSONWriter(capacity: 3072 * max(1, records.count))
        var fragments = ReportFragments()
        var statuses: [VerificationStatus?] = []
        statuses.reserveCapacity(records.count)
        if case .verify(let verifier, let expectations) = mode, let json = jsonForm, settlingReplays || !verifier.checksReplays {
            // Nothing is rendered again later (replays are decided here, or
            // there is no replay check): each verdict is written as it is
            // made, with no report value in between.
            // By index, each part read in place: binding the record would copy (retain) it.
            for index in records.indices {
                let verdict = settledVerdict(records[index].record, verifier: verifier, expectations: expectations)
                let input = records[index].record.index
                if json.isArray { output.literal(input == 1 ? "\n" : ",\n") }
                TokenReport.write(
                    verdict: verdict,
                    input: input,
                    source: records[index].source,
                    line: records[index].record.line,
                    recordEnvelope: records[index].record.envelope,
                    to: &output,
                    fragments: &fragments,
                    showSignedBytes: json.showSignedBytes
                )
                if !json.isArray { output.literal("\n") }
                statuses.append(verdict.status)
            }
            return RenderedChunk(output: output, statuses: statuses, pending: nil)
        }
        var reports: [TokenReport] = []
        var questions: [(position: Int, replay: TokenVerifier.PendingReplay)] = []
        // By index: `for queued in records` would copy (retain) each record.
        for index in records.indices {
            let (report, question) = evaluate(records[index], settlingReplays: settlingReplays)
            if let question { questions.append((statuses.count, question)) }
            if !settlingReplays { reports.append(report) }
            write(report, to: &output, fragments: &fragments)
            statuses.append(report.status)
        }
        let pending =
            questions.isEmpty
            ? nil
            : RenderedChunk.PendingReplays(reports: reports, questions: questions, firstInput: records.first!.record.index)
        return RenderedChunk(output: output, statuses: statuses, pending: pending)
    }

    /// The chunk with its replays decided in order; the same chunk when the
    /// store accepted every one (the verdicts rendered were right).
    func settleReplays(_ chunk: RenderedChunk) -> RenderedChunk {
        guard var pending = chunk.pending, case .verify(let verifier, _) = mode else { return chunk }
        var changed = false
        for (position, replay) in pending.questions {
            let decision = verifier.decideReplayWithoutWaiting(replay)
            guard decision != .accepted else { continue }
            let report = pending.reports[position]
            let settled = verifier.settle(report.verdict!, with: decision)
            pending.reports[position] = TokenReport(input: report.input, source: report.source, line: report.line, verdict: settled)
            changed = true
        }
        guard changed else { return chunk }
        var output = JSONWriter(capacity: 2048 * pending.reports.count)
        var fragments = ReportFragments()
        for report in pending.reports { write(report, to: &output, fragments: &fragments) }
        return RenderedChunk(output: output, statuses: pending.reports.map(\.status), pending: nil)
    }

    /// The JSON forms: whether the objects are an array's elements, and whether they carry the signed bytes.
    private var jsonForm: (isArray: Bool, showSignedBytes: Bool)? {
        switch format {
        case .text: nil
        case .json(let showSignedBytes): (true, showSignedBytes)
        case .jsonl(let showSignedBytes): (false, showSignedBytes)
        }
    }

    /// A record's verdict with its replay decided here, in order.
    private func settledVerdict(_ record: TokenRecord, verifier: TokenVerifier, expectations: RequestExpectations) -> Verdict {
        switch decoders.decode(record) {
        case .failure(let error):
            return Verdict(formatError: error)
        case .success(let token):
            switch verifier.evaluate(token, expecting: expectations) {
            case .decided(let decided):
                return decided
            case .awaitingReplay(let provisional, let pending):
                return verifier.settle(provisional, with: verifier.decideReplayWithoutWaiting(pending))
            }
        }
    }

    private func evaluate(_ queued: QueuedRecord, settlingReplays: Bool) -> (TokenReport, TokenVerifier.PendingReplay?) {
        var (report, question) = evaluateRecord(queued, settlingReplays: settlingReplays)
        if report.token == nil { report.recordEnvelope = queued.record.envelope }
        return (report, question)
    }

    private func evaluateRecord(_ queued: QueuedRecord, settlingReplays: Bool) -> (TokenReport, TokenVerifier.PendingReplay?) {
        let record = queued.record
        switch mode {
        case .verify(let verifier, let expectations):
            let verdict: Verdict
            var question: TokenVerifier.PendingReplay? = nil
            switch decoders.decode(record) {
            case .failure(let error):
                verdict = Verdict(formatError: error)
            case .success(let token):
                switch verifier.evaluate(token, expecting: expectations) {
                case .decided(let decided):
                    verdict = decided
                case .awaitingReplay(let provisional, let pending):
                    if settlingReplays {
                        verdict = verifier.settle(provisional, with: verifier.decideReplayWithoutWaiting(pending))
                    } else {
                        verdict = provisional
                        question = pending
                    }
                }
            }
            return (TokenReport(input: record.index, source: queued.source, line: record.line, verdict: verdict), question)
        case .inspect(let verifier):
            let decoded = decoders.decode(record)
            guard let verifier else {
                return (TokenReport(input: record.index, source: queued.source, line: record.line, decoded: decoded), nil)
            }
            switch decoded {
            case .success(let token):
                return (
                    TokenReport(
                        input: record.index,
                        source: queued.source,
                        line: record.line,
                        token: token,
                        error: nil,
                        verdict: verifier.verify(token)
                    ), nil
                )
            case .failure(let error):
                return (
                    TokenReport(
                        input: record.index,
                        source: queued.source,
                        line: record.line,
                        token: nil,
                        error: error,
                        verdict: Verdict(formatError: error)
                    ), nil
                )
            }
        }
    }

    private func write(_ report: TokenReport, to output: inout JSONWriter, fragments: inout ReportFragments) {
        switch format {
        case .text(let options):
            output.raw(report.text(options).rendered)
        case .json(let showSignedBytes):
            // The array's separators: the first object of the stream opens it.
            output.literal(report.input == 1 ? "\n" : ",\n")
            report.write(to: &output, fragments: &fragments, showSignedBytes: showSignedBytes)
        case .jsonl(let showSignedBytes):
            report.write(to: &output, fragments: &fragments, showSignedBytes: showSignedBytes)
            output.literal("\n")
        }
    }
}

/// A batch being evaluated and rendered by `jobs` threads, in the background,
/// one chunk at a time.
private final class InFlightBatch: Sendable {
    /// Each chunk's output, in input order; one uncontended lock per chunk of
    /// records is nothing beside rendering them.
    private let slots: Mutex<[RenderedChunk?]>
    private let next = Atomic<Int>(0)
    private let group = DispatchGroup()

    init(_ records: [QueuedRecord], chunks: [Range<Int>], jobs: Int, evaluator: RecordEvaluator) {
        slots = Mutex([RenderedChunk?](repeating: nil, count: chunks.count))
        for _ in 0..<min(jobs, chunks.count) {
            DispatchQueue.global().async(group: group) { [self] in
                while true {
                    let chunk = next.add(1, ordering: .relaxed).oldValue
                    guard chunk < chunks.count else { break }
                    let rendered = evaluator.render(records[chunks[chunk]], settlingReplays: false)
                    slots.withLock { $0[chunk] = rendered }
                }
            }
        }
    }

    /// Blocks until every chunk is rendered; the chunks in input order.
    func wait() -> [RenderedChunk] {
        group.wait()
        return slots.withLock { $0.map { $0! } }
    }
}

/// The closing count per status of a stream.
public struct StreamSummary: Sendable {
    /// Records seen so far.
    public private(set) var total = 0
    /// Tokens that failed: not `VALID_TOKEN` (verify), not decoded (inspect).
    public private(set) var failures = 0
    /// Per status; nil counts tokens decoded and not verified.
    public private(set) var counts: [VerificationStatus?: Int] = [:]
    let inspect: Bool

    init(inspect: Bool) { self.inspect = inspect }

    mutating func add(_ status: VerificationStatus?) {
        total += 1
        counts[status, default: 0] += 1
        let failed = inspect ? status == .invalidTokenFormat : status != .validToken
        if failed { failures += 1 }
    }

    /// `3 tokens: 2 VALID_TOKEN, 1 TOKEN_EXPIRED`, statuses in the order of docs/DESIGN.md#statuses.
    public func text(style: TextStyle) -> TerminalText {
        let ordered = counts.keys.sorted { rank($0) < rank($1) }
        let parts = ordered.map { status -> TerminalText in
            let name = status.map { style.status($0) } ?? "DECODED"
            return "\(counts[status]!) \(name)"
        }
        return "\(total) token\(total == 1 ? "" : "s"): " + TerminalText.joined(parts, separator: ", ")
    }

    private func rank(_ status: VerificationStatus?) -> Int {
        status.map { VerificationStatus.allCases.firstIndex(of: $0)! } ?? -1
    }
}
