import Testing

/// Holds ``IntegrationLock/machine`` for a whole suite: suites that load both
/// cores (tokengate's fleet) never run beside suites that measure
/// milliseconds (the Redis store's deadline checks).
public struct MachineLockTrait: SuiteTrait, TestScoping {
    public func provideScope(
        for test: Test,
        testCase: Test.Case?,
        performing function: @Sendable () async throws -> Void
    ) async throws {
        try await IntegrationLock.machine.withLock { try await function() }
    }
}

extension Trait where Self == MachineLockTrait {
    /// The suite holds the machine lock while it runs.
    public static var holdsMachineLock: Self { Self() }
}
