import IntegrationSupport
import Testing

/// Holds ``IntegrationLock/machine`` for a whole suite: the fleet tests load
/// both cores and must not run beside the Redis store's deadline checks.
struct MachineLockTrait: SuiteTrait, TestScoping {
    func provideScope(for test: Test, testCase: Test.Case?,
                      performing function: @Sendable () async throws -> Void) async throws {
        try await IntegrationLock.machine.withLock { try await function() }
    }
}

extension Trait where Self == MachineLockTrait {
    static var holdsMachineLock: Self { Self() }
}
