internal import NIOCore

extension EventLoopFuture where Value: Sendable {
    /// The future's value, waited for until `deadline` at the latest: then
    /// the error `timedOut()` makes. Any error other than a
    /// ``RedisClientError`` is `connectionFailed`, prefixed with `context`.
    /// One shape for every wait of the client (a connection, a topology, a
    /// primary found through the sentinels), so each one keeps the
    /// operation's deadline and the timer never outlives the wait.
    func boundedValue(
        before deadline: NIODeadline,
        context: String,
        timedOut: @escaping @Sendable () -> RedisClientError
    ) async throws(RedisClientError) -> Value {
        let bounded = eventLoop.makePromise(of: Value.self)
        let timeout = eventLoop.scheduleTask(deadline: deadline) { bounded.fail(timedOut()) }
        cascade(to: bounded)
        bounded.futureResult.whenComplete { _ in timeout.cancel() }
        do {
            // A cancelled caller stops waiting now, not at the deadline.
            return try await withTaskCancellationHandler {
                try await bounded.futureResult.get()
            } onCancel: {
                bounded.fail(RedisClientError(.cancelled, "\(context): the caller stopped waiting"))
            }
        } catch let error as RedisClientError {
            throw error
        } catch {
            throw RedisClientError(.connectionFailed, "\(context): \(ConnectFailureWords.describe(error))")
        }
    }
}
