// router-dispatch: what Hummingbird's `Router` and a middleware chain cost a
// request against a hand-written `switch` on the path, the gate's two ways
// of routing (docs/PERFORMANCE.md, "Routes where Hummingbird users look").
//
// Both responders route the gate's endpoints to handlers that return a
// response built once, and both do the gate's per-request work around them
// the same way (a task-local trace binding, an in-flight count, a duration
// read from the clock): what differs is the dispatch alone. Each round times
// both, alternating, in CPU time of the process, so a machine shared with
// other builds slows both alike; the report is the median over the rounds.
//
//   router-dispatch [--rounds R] [--requests N]
import Glibc
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import Synchronization

struct BenchSource: RequestContextSource {
    let logger: Logger
}

struct BenchContext: RequestContext {
    typealias Source = BenchSource
    var coreContext: CoreRequestContextStorage
    init(source: BenchSource) { coreContext = .init(source: source) }
}

enum Endpoint: String, CaseIterable, Sendable {
    case authRequest, forwardAuth, extAuthz, verify, inspect, playback, debugger, healthz, readyz, metrics, other
}

/// The per-request work both ways do: stand-ins for `RequestTrace` and `GateMetrics`.
final class Work: Sendable {
    @TaskLocal static var trace: UInt64 = 0
    let sequence = Atomic<UInt64>(0)
    let inFlight = Atomic<Int>(0)
    /// Per endpoint: requests and nanoseconds.
    let totals = Mutex<[Endpoint: (count: Int, nanoseconds: Int64)]>([:])

    func record(_ endpoint: Endpoint, since start: ContinuousClock.Instant) {
        let spent = (ContinuousClock.now - start).components.attoseconds / 1_000_000_000
        totals.withLock {
            $0[endpoint, default: (0, 0)].count += 1
            $0[endpoint, default: (0, 0)].nanoseconds += spent
        }
    }
}

let canned = Response(status: .ok, headers: [.cacheControl: "no-store"])
let readMethods: Set<HTTPRequest.Method> = [.get, .head]
let probes: Set<String> = ["/healthz", "/readyz", "/metrics"]

/// The gate's `switch` (`GateResponder.route` before the port), handlers stubbed.
struct SwitchResponder: HTTPResponder {
    typealias Context = BenchContext
    let work: Work

    func respond(to request: Request, context: Context) async throws -> Response {
        await Work.$trace.withValue(work.sequence.add(1, ordering: .relaxed).newValue) { route(request) }
    }

    func route(_ request: Request) -> Response {
        let start = ContinuousClock.now
        work.inFlight.add(1, ordering: .relaxed)
        let path = request.uri.path
        let endpoint: Endpoint
        let response: Response
        switch path {
        case "/v1/auth-request":
            endpoint = .authRequest
            response = readMethods.contains(request.method) ? canned : Response(status: .methodNotAllowed)
        case "/v1/forward-auth":
            endpoint = .forwardAuth
            response = readMethods.contains(request.method) ? canned : Response(status: .methodNotAllowed)
        case "/v1/verify":
            endpoint = .verify
            response = canned
        case "/v1/inspect":
            endpoint = .inspect
            response = canned
        case "/v1/playback":
            endpoint = .playback
            response = canned
        case _ where probes.contains(path) && !readMethods.contains(request.method):
            endpoint = .other
            response = Response(status: .methodNotAllowed)
        case "/healthz":
            endpoint = .healthz
            response = canned
        case "/readyz":
            endpoint = .readyz
            response = canned
        case "/metrics":
            endpoint = .metrics
            response = canned
        case _ where path == "/debugger" || path.hasPrefix("/debugger/"):
            endpoint = .debugger
            response = canned
        case _ where path == "/v1/ext-authz" || path.hasPrefix("/v1/ext-authz/"):
            endpoint = .extAuthz
            response = canned
        default:
            endpoint = .other
            response = Response(status: .notFound)
        }
        work.inFlight.add(-1, ordering: .relaxed)
        work.record(endpoint, since: start)
        return response
    }
}

struct TraceMiddleware: RouterMiddleware {
    typealias Context = BenchContext
    let work: Work
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        try await Work.$trace.withValue(work.sequence.add(1, ordering: .relaxed).newValue) { try await next(request, context) }
    }
}

struct MetricsMiddleware: RouterMiddleware {
    typealias Context = BenchContext
    let work: Work
    let labels: [String: Endpoint]
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        work.inFlight.add(1, ordering: .relaxed)
        defer {
            work.inFlight.add(-1, ordering: .relaxed)
            work.record(context.endpointPath.flatMap { labels[$0] } ?? .other, since: start)
        }
        return try await next(request, context)
    }
}

/// What the trie does not take: the any-method prefixes, 405 and 404.
struct FallbackMiddleware: RouterMiddleware {
    typealias Context = BenchContext
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let path = request.uri.path
        if path == "/v1/ext-authz" || path.hasPrefix("/v1/ext-authz/") {
            context.coreContext.endpointPath.value = "/v1/ext-authz/**"
            return canned
        }
        if path == "/debugger" || path.hasPrefix("/debugger/") {
            context.coreContext.endpointPath.value = "/debugger/**"
            return canned
        }
        return Response(status: .notFound)
    }
}

func router(_ work: Work) -> RouterResponder<BenchContext> {
    let labels: [String: Endpoint] = [
        "/v1/auth-request": .authRequest, "/v1/forward-auth": .forwardAuth, "/v1/ext-authz/**": .extAuthz,
        "/v1/verify": .verify, "/v1/inspect": .inspect, "/v1/playback": .playback, "/debugger/**": .debugger,
        "/healthz": .healthz, "/readyz": .readyz, "/metrics": .metrics,
    ]
    let router = Router(context: BenchContext.self)
    router.add(middleware: TraceMiddleware(work: work))
    router.add(middleware: MetricsMiddleware(work: work, labels: labels))
    let handler: @Sendable (Request, BenchContext) async throws -> Response = { _, _ in canned }
    for path in ["/v1/auth-request", "/v1/forward-auth", "/healthz", "/readyz", "/metrics"] {
        router.get(RouterPath(path), use: handler)
        router.head(RouterPath(path), use: handler)
    }
    router.post("/v1/verify", use: handler)
    router.post("/v1/inspect", use: handler)
    router.get("/v1/playback", use: handler)
    router.post("/v1/playback", use: handler)
    router.add(middleware: FallbackMiddleware())
    return router.buildResponder()
}

func cpuNanoseconds() -> Int64 {
    var spec = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &spec)
    return Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec)
}

/// CPU nanoseconds per request over `count` requests, a fresh context each (as the server makes one per request).
func measure(_ responder: some HTTPResponder<BenchContext>, _ request: Request, count: Int) async throws -> Double {
    let source = BenchSource(logger: Logger(label: "bench"))
    var statuses = 0
    let start = cpuNanoseconds()
    for _ in 0..<count {
        statuses &+= try await responder.respond(to: request, context: BenchContext(source: source)).status.code
    }
    let spent = cpuNanoseconds() - start
    precondition(statuses != 0)
    return Double(spent) / Double(count)
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

var rounds = 15
var requests = 200_000
var arguments = CommandLine.arguments.dropFirst()
while let option = arguments.popFirst() {
    guard let value = arguments.popFirst().flatMap(Int.init), value > 0 else {
        print("router-dispatch: \(option) needs a positive number")
        exit(64)
    }
    switch option {
    case "--rounds": rounds = value
    case "--requests": requests = value
    default:
        print("router-dispatch: unknown option \(option)")
        exit(64)
    }
}

let work = Work()
let switched = SwitchResponder(work: work)
let routed = router(work)
let cases: [(String, HTTPRequest.Method, String)] = [
    ("media token (auth-request)", .get, "/v1/auth-request"),
    ("Envoy (ext-authz prefix)", .get, "/v1/ext-authz/hls/tnt/seg1.ts"),
    ("probe (healthz)", .get, "/healthz"),
    ("unknown path (404)", .get, "/v1/nothing"),
]
print("router-dispatch: \(rounds) rounds of \(requests) requests a way, alternating; CPU ns a request, median")
print("case | switch | router | router - switch")
for (name, method, path) in cases {
    let request = Request(
        head: HTTPRequest(method: method, scheme: "http", authority: "gate", path: path),
        body: .init(buffer: ByteBuffer())
    )
    // Warm both up: the first calls pay for lazy metadata and allocation pools.
    _ = try await measure(switched, request, count: requests / 10)
    _ = try await measure(routed, request, count: requests / 10)
    var a: [Double] = []
    var b: [Double] = []
    var d: [Double] = []
    for round in 0..<rounds {
        let (x, y): (Double, Double)
        if round % 2 == 0 {
            x = try await measure(switched, request, count: requests)
            y = try await measure(routed, request, count: requests)
        } else {
            y = try await measure(routed, request, count: requests)
            x = try await measure(switched, request, count: requests)
        }
        a.append(x)
        b.append(y)
        d.append(y - x)
    }
    print(
        "\(name) | \(String(format1: median(a))) | \(String(format1: median(b))) | \(String(format1: median(d))) (range \(String(format1: d.min()!))..\(String(format1: d.max()!)))"
    )
}

extension String {
    /// One decimal, without Foundation's `String(format:)`.
    init(format1 value: Double) {
        let tenths = Int((value * 10).rounded())
        self = "\(tenths / 10).\(abs(tenths % 10))"
    }
}
