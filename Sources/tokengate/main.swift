import NIOCore
import NIOPosix
import TokenGate

#if canImport(Glibc)
import Glibc
#endif

// TOKENGATE_EXECUTOR=event-loops makes NIO's event loops Swift concurrency's
// global executor (done before anything async runs, or it cannot be): a
// request's handler then runs on the threads that read it instead of hopping
// to Swift's pool and back. Measured both ways (docs/PERFORMANCE.md, "One
// pool"): 1.36x the media tokens/s with the in-memory store, 0.76x with
// Redis, so Swift's own pool stays the default and this is the opt-in.
if getenv("TOKENGATE_EXECUTOR").map({ String(cString: $0) }) == "event-loops" {
    _ = NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
}

// `tokengate serve …`: everything is in the TokenGate library target, so that
// its tests drive the same code.
await TokenGateCommand.runFromCommandLine()
