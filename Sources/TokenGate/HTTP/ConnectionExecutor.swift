import NIOCore

/// Runs a connection's request handling on the event loop that reads the
/// connection, as a task executor preference: without it every request's
/// handler is resumed on Swift's cooperative pool and its answer handed back
/// to the loop, two thread hops per request for a decision that needs no I/O
/// (a session, a verdict-cache hit, the in-memory store, a refusal before
/// verification). Work that does wait — a Redis reply — resumes here when it
/// arrives, on this loop, not on the pool.
final class ConnectionExecutor: TaskExecutor {
    private let eventLoop: any EventLoop

    init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        // Straight onto the loop's own job queue, not through `execute` and
        // a closure: one allocation and a retain pair fewer per resumption,
        // which is what made the difference (docs/PERFORMANCE.md).
        eventLoop.enqueue(job)
    }
}
