internal import NIOCore

/// The time the client's state machines are given, and the two ways their
/// drivers wait (docs/DESIGN.md#the-redis-clients-state-machines): until an
/// instant a machine named, and for work a caller carries within its own deadline.
enum MachineTime {
    /// Nanoseconds on the monotonic clock of every event's `now`.
    static var now: UInt64 { NIODeadline.now().uptimeNanoseconds }

    /// Until `instant` (a machine's `sleep(until:)`); a cancelled caller wakes at once.
    static func sleep(until instant: UInt64) async {
        let now = Self.now
        if instant > now { try? await Task.sleep(nanoseconds: instant - now) }
    }

    /// Runs `work` as a child task until it ends or `deadline` passes,
    /// whichever comes first; at the deadline it is cancelled, and awaited.
    static func run(_ work: @escaping @Sendable () async -> Void, until deadline: NIODeadline) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await work() }
            group.addTask {
                let left = (deadline - .now()).nanoseconds
                if left > 0 { try? await Task.sleep(nanoseconds: UInt64(left)) }
            }
            await group.next()
            group.cancelAll()
        }
    }
}
