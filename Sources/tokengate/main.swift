import NIOCore
import NIOPosix
import TokenGate

#if canImport(Glibc)
import Glibc
#endif

// Swift concurrency's jobs run on NIO's event loops, the same threads that
// read the requests, instead of a second pool: a request's handler no longer
// hops from a loop to the pool and back (docs/PERFORMANCE.md, "One pool").
// Done before anything async runs, or it cannot be. TOKENGATE_EXECUTOR=swift-pool
// keeps Swift's own pool, for the A/B measurement of Benchmarks/gate.
if getenv("TOKENGATE_EXECUTOR").map({ String(cString: $0) }) != "swift-pool" {
    _ = NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
}

// `tokengate serve …`: everything is in the TokenGate library target, so that
// its tests drive the same code.
await TokenGateCommand.runFromCommandLine()
