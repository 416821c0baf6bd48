import NIOCore
import Synchronization

/// Bounds what clients can make the gate hold, whatever they do
/// (docs/DESIGN.md#limits-deadlines-and-revocation): open connections in all, open
/// connections per peer address, and request-body bytes in flight.
///
/// Past the connection cap the listening channel stops reading, so new
/// connections wait in the kernel's listen backlog instead of costing a file
/// descriptor and buffers here; it reads again when one closes. The few
/// accepted in the same read as the one that reached the cap, and every
/// connection over a peer's share, are closed at once. Each is counted.
final class ConnectionLimiter: Sendable {
    let limits: ConnectionLimits
    private let metrics: GateMetrics
    private struct State {
        var open = 0
        var byPeer: [String: Int] = [:]
        var paused = false
    }
    private let state = Mutex(State())
    private let bodyBytes = Atomic<Int>(0)

    init(limits: ConnectionLimits, metrics: GateMetrics) {
        self.limits = limits
        self.metrics = metrics
    }

    var openConnections: Int { state.withLock { $0.open } }
    var bodyBytesInFlight: Int { bodyBytes.load(ordering: .relaxed) }

    /// Called when a connection was accepted, on its event loop: whether it
    /// may stay. One that may stay is released when it closes.
    func admit(_ channel: any Channel) -> Bool {
        let peer = channel.remoteAddress?.ipAddress ?? "unknown"
        enum Outcome {
            case admitted(pause: Bool)
            case overTotal, overPeer
        }
        let outcome: Outcome = state.withLock { state in
            guard state.open < limits.maximumConnections else { return .overTotal }
            if let perPeer = limits.maximumConnectionsPerPeer, state.byPeer[peer, default: 0] >= perPeer { return .overPeer }
            state.open += 1
            state.byPeer[peer, default: 0] += 1
            let pause = state.open >= limits.maximumConnections && !state.paused
            if pause { state.paused = true }
            return .admitted(pause: pause)
        }
        switch outcome {
        case .overTotal:
            metrics.countConnectionRefused(.maximumConnections)
            return false
        case .overPeer:
            metrics.countConnectionRefused(.perPeer)
            return false
        case .admitted(let pause):
            metrics.connectionsOpen.increment()
            if pause, let listener = channel.parent {
                metrics.countConnectionRefused(.acceptPaused)
                listener.setOption(ChannelOptions.autoRead, value: false).whenComplete { _ in }
            }
            channel.closeFuture.whenComplete { _ in self.release(peer: peer, listener: channel.parent) }
            return true
        }
    }

    private func release(peer: String, listener: (any Channel)?) {
        let resume = state.withLock { state -> Bool in
            state.open -= 1
            let left = state.byPeer[peer, default: 1] - 1
            state.byPeer[peer] = left > 0 ? left : nil
            guard state.paused, state.open < limits.maximumConnections else { return false }
            state.paused = false
            return true
        }
        metrics.connectionsOpen.decrement()
        if resume, let listener {
            listener.setOption(ChannelOptions.autoRead, value: true).whenComplete { _ in listener.read() }
        }
    }

    /// Reserves `bytes` of the shared body budget; false when it would exceed it.
    func reserveBody(_ bytes: Int) -> Bool {
        guard bytes > 0 else { return true }
        let after = bodyBytes.add(bytes, ordering: .relaxed).newValue
        guard after <= limits.maximumBodyBytesInFlight else {
            bodyBytes.subtract(bytes, ordering: .relaxed)
            return false
        }
        return true
    }

    func releaseBody(_ bytes: Int) {
        if bytes > 0 { bodyBytes.subtract(bytes, ordering: .relaxed) }
    }
}
