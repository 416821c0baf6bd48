import CDNTokens
import EntitlementTokens
import HARReport
import Hummingbird
import HummingbirdCore

/// The web debugger's routes (docs/DESIGN.md#the-web-debugger), served by `tokengate debugger` and,
/// on loopback, by `tokengate serve --debugger`:
///
/// - `GET /debugger`, `/debugger/debugger.js`, `/debugger/debugger.css`,
///   `/debugger/favicon.svg`: the page, the files of `Debugger/Assets/` compiled
///   into the binary (``DebuggerAssets``: nothing to install beside it);
/// - `POST /debugger/report`: the tokens of the body (``DebuggerInput``: text,
///   or `multipart/form-data` with `input` and a pasted public `key`)
///   verified against the page's expectations (``DebuggerExpectations``),
///   answered as `{"now": ISO 8601, "nowReadAs"?: epoch unit,
///   "reports": [report objects (docs/DESIGN.md#output-forms) with decodedXML], "errorXML": [per report,
///   the decoded XML its format error points into, or null], "encoded": [per
///   report, the record as pasted]}` — so the page can mark an error inside a
///   token that arrived Base64- or percent-encoded, and show what was pasted
///   beside what it decoded to — plus, with a pasted key, `"pastedKeys"` and
///   `"pastedKey"` (per report, ``PastedKeyCheck``);
/// - `POST /debugger/har`: a HAR capture as the body (at most 64 MiB), answered
///   with the same report as `tokeninspect har` (``DebuggerHAR``): the HTML page, or
///   with `?format=json` the JSON object;
/// - `POST /debugger/csp-report`, `GET /debugger/csp-reports`: the browser's
///   Content-Security-Policy violation reports, kept (bounded) so a test or a
///   curious engineer can see that nothing was blocked.
///
/// Nothing here touches the replay store or the verdict cache, and nothing is
/// kept between requests but the violation reports.
struct DebuggerEndpoints: MountedRoutes {
    enum Path {
        static let page = "/debugger"
        static let script = "/debugger/debugger.js"
        static let stylesheet = "/debugger/debugger.css"
        static let favicon = "/debugger/favicon.svg"
        static let report = "/debugger/report"
        static let har = "/debugger/har"
        static let cspReport = "/debugger/csp-report"
        static let cspReports = "/debugger/csp-reports"
    }

    let keys: GateVerifier
    /// The `Host` names every route here answers to; any other gets 421.
    let hosts: DebuggerHosts
    let violations: CSPViolationLog
    /// CDN pastes: verified against the gate's `--cdn-profile`s under `serve --debugger`,
    /// decoded only by the standalone debugger (it has no profiles).
    let cdn: CDNPasteInspection
    /// The server's clock, when the page does not set "now".
    let clock: @Sendable () -> TokenTimestamp
    /// `POST /debugger/har`, with the same keys, profiles and leeway, and the gate's CAT keys and session secrets.
    let har: DebuggerHAR

    init(
        keys: GateVerifier,
        hosts: DebuggerHosts,
        violations: CSPViolationLog = CSPViolationLog(),
        cdn: CDNPasteInspection = CDNPasteInspection(),
        catKeys: @escaping @Sendable () -> [CATKey] = { [] },
        sessionSecrets: @escaping @Sendable () -> PlaybackSessionSecrets? = { nil },
        clock: @escaping @Sendable () -> TokenTimestamp = TokenTimestamp.now
    ) {
        self.keys = keys
        self.hosts = hosts
        self.violations = violations
        self.cdn = cdn
        self.clock = clock
        har = DebuggerHAR(keys: {
            // Under `serve --debugger` the gate's own `--cat-key` keys and session secrets, as they are now.
            HARKeys(
                tokenKeys: keys.signature.ring,
                profiles: cdn.profiles().profiles,
                catKeys: catKeys(),
                sessionSecrets: sessionSecrets(),
                leewaySeconds: cdn.leewaySeconds
            )
        })
    }

    func handles(_ path: String) -> Bool { Self.handles(path) }

    static func handles(_ path: String) -> Bool {
        path == Path.page || path.hasPrefix(Path.page + "/")
    }

    /// The answer for a path that ``handles(_:)``: 421 first, for a `Host`
    /// that is not this server's (DNS rebinding, see ``DebuggerHosts``).
    func respond(to request: Request) async -> Response {
        guard hosts.allows(request) else { return DebuggerHosts.refusal }
        return switch (request.uri.path, request.method) {
        case (Path.page, .get), (Path.page, .head):
            DebuggerHeaders.response(.ok, contentType: "text/html; charset=utf-8", bytes: DebuggerAssets.page)
        case (Path.script, .get), (Path.script, .head):
            DebuggerHeaders.response(.ok, contentType: "text/javascript; charset=utf-8", bytes: DebuggerAssets.script)
        case (Path.stylesheet, .get), (Path.stylesheet, .head):
            DebuggerHeaders.response(.ok, contentType: "text/css; charset=utf-8", bytes: DebuggerAssets.stylesheet)
        case (Path.favicon, .get), (Path.favicon, .head):
            DebuggerHeaders.response(.ok, contentType: "image/svg+xml", bytes: DebuggerAssets.favicon)
        case (Path.report, .post):
            await report(request)
        case (Path.har, .post):
            await har.respond(to: request)
        case (Path.cspReport, .post):
            await collectViolation(request)
        case (Path.cspReports, .get):
            DebuggerHeaders.response(.ok, contentType: "application/json", bytes: violations.json())
        case (Path.page, _), (Path.script, _), (Path.stylesheet, _), (Path.favicon, _), (Path.report, _), (Path.har, _), (Path.cspReport, _),
            (Path.cspReports, _):
            DebuggerHeaders.response(.methodNotAllowed, contentType: "text/plain; charset=utf-8", "method not allowed\n")
        default:
            DebuggerHeaders.response(.notFound, contentType: "text/plain; charset=utf-8", "not found\n")
        }
    }

    private func report(_ request: Request) async -> Response {
        let expectations: DebuggerExpectations
        do throws(DebuggerExpectations.Invalid) {
            expectations = try DebuggerExpectations(query: request.uri.queryParameters)
        } catch {
            return Self.error(.badRequest, error.reason)
        }
        let input: DebuggerInput
        do throws(ReportEndpoints.Failure) {
            input = try await DebuggerInput(request)
        } catch {
            switch error {
            case .badRequest(let reason): return Self.error(.badRequest, reason)
            case .tooLarge(let reason): return Self.error(.contentTooLarge, reason)
            }
        }
        let askedKind: CredentialKind?
        do throws(ReportEndpoints.Failure) {
            askedKind = try DebuggerCredentials.kind(named: request.uri.queryParameters.get("kind"))
        } catch {
            if case .badRequest(let reason) = error { return Self.error(.badRequest, reason) }
            return Self.error(.badRequest, "kind")
        }
        let pastedRing: KeyRing?
        do throws(PastedKey.Refused) {
            pastedRing = try input.key.flatMap(PastedKey.ring(from:))
        } catch {
            return Self.error(.badRequest, "pasted key: \(error.reason)", field: "key")
        }
        let now = expectations.now ?? clock()
        // Built per request from the keys in force: the page chooses the
        // requestor, MVPDs, leeway and "now"; no replay store, no cache.
        let policy = expectations.policy(now: now)
        let verifier = TokenVerifier(signature: keys.signature, policy: policy)
        // The pasted key's own verifier: that ring alone, never the gate's.
        let pastedVerifier = pastedRing.map { TokenVerifier(signature: .trustedKeys($0), policy: policy) }
        let credentials = DebuggerCredentials(
            kind: askedKind,
            verifier: Self.statementVerifier(keys.signature.ring, expectations: expectations, now: now),
            pastedVerifier: pastedRing.map { Self.statementVerifier($0, expectations: expectations, now: now) },
            requestor: expectations.requestorID,
            requestorIDVerifier: SignedRequestorIDVerifier(ring: keys.signature.ring ?? KeyRing([])),
            pastedRequestorIDVerifier: pastedRing.map { SignedRequestorIDVerifier(ring: $0) }
        )
        // Each record's parts, written into one answer below.
        var reports: [[UInt8]] = []
        var errorXML: [String?] = []
        var pastedChecks: [String?] = []
        reports.reserveCapacity(input.records.count)
        let decoder = TokenDecoder()
        var encoded: [String] = []
        let text = String(decoding: input.text, as: UTF8.self)
        let readsAsCDN = askedKind == nil && CDNPasteInspection.readsAsCDN(text, kind: nil)
        if readsAsCDN {
            // CDN tokens (docs/DESIGN.md#reading-cdn-tokens-back): the library's report, as on /v1/inspect.
            let pastes = CDNPasteInspection.pastes(text)
            guard pastes.count <= ReportEndpoints.maximumRecords else {
                return Self.error(.contentTooLarge, "\(pastes.count) pastes; at most \(ReportEndpoints.maximumRecords) a request")
            }
            for (index, paste) in pastes.enumerated() {
                let report = cdn.report(
                    paste,
                    input: index + 1,
                    source: "pasted",
                    kind: nil,
                    facts: CDNPasteInspection.Facts(url: nil, now: now, clientIP: nil)
                )
                reports.append(report.json.encoded)
                errorXML.append(nil)
                encoded.append(paste.text)
                // A pasted key is for entitlement tokens and credentials: nothing to try here.
                if pastedRing != nil { pastedChecks.append(nil) }
            }
        }
        for (index, record) in input.records.enumerated() where !readsAsCDN {
            let candidate = ReportEndpoints.credentialCandidate(record, in: input.text, recordCount: input.records.count)
            encoded.append(String(decoding: candidate, as: UTF8.self))
            if let credential = credentials.report(record, candidate: candidate, input: index + 1) {
                reports.append(credential.json)
                errorXML.append(nil)
                if let check = credential.pastedKey { pastedChecks.append(check) }
                continue
            }
            let verdict = await verifier.verify(record, expecting: expectations.request)
            let report = TokenReport(input: index + 1, source: "pasted", line: record.line, verdict: verdict)
            reports.append(report.json(showDecodedXML: true))
            errorXML.append(Self.errorXML(report, record: record, decoder: decoder))
            if let pastedVerifier {
                pastedChecks.append(await PastedKeyCheck.json(gateVerdict: verdict, pasted: pastedVerifier, expecting: expectations.request))
            }
        }
        var body = JSONWriter(capacity: 1024 + reports.reduce(0) { $0 + $1.count } * 2, controlEscapes: .unicode)
        body.beginObject()
        body.member("now")
        body.string(now.iso8601)
        if let unit = expectations.nowEpochUnit {
            body.member("nowReadAs")
            body.string(unit.rawValue)
        }
        body.member("reports")
        body.beginArray()
        for report in reports {
            body.element()
            body.encoded(report)
        }
        body.endArray()
        body.member("errorXML")
        Self.strings(errorXML, into: &body)
        // What each record was as pasted: the page shows it beside the decoded report.
        body.member("encoded")
        Self.strings(encoded, into: &body)
        if let pastedRing {
            body.member("pastedKeys")
            Self.strings(pastedRing.keys.map(\.description), into: &body)
            body.member("pastedKey")
            body.beginArray()
            for check in pastedChecks {
                body.element()
                if let check { body.encoded(Array(check.utf8)) } else { body.null() }
            }
            body.endArray()
        }
        body.endObject()
        body.raw("\n")
        return DebuggerHeaders.response(.ok, contentType: "application/json", bytes: body.bytes)
    }

    /// A software statement verifier of `ring`'s keys (those a JWS can use), with the page's leeway and "now".
    static func statementVerifier(_ ring: KeyRing?, expectations: DebuggerExpectations, now: TokenTimestamp) -> SoftwareStatementVerifier {
        let keys = (ring?.keys ?? []).compactMap { try? JWSVerificationKey($0) }
        return SoftwareStatementVerifier(keys: keys, leewayMilliseconds: expectations.leewayMilliseconds, clock: { now })
    }

    /// A JSON array of strings, `null` for a missing one.
    private static func strings(_ values: [String?], into json: inout JSONWriter) {
        json.beginArray()
        for value in values {
            json.element()
            json.string(value)
        }
        json.endArray()
    }

    /// The decoded XML a format error of a later stage than transport points
    /// into; nil (`null` in the answer) for a token, or a transport error.
    static func errorXML(_ report: TokenReport, record: TokenRecord, decoder: TokenDecoder) -> String? {
        guard let error = report.error, error.stage != .transport,
            let xml = try? decoder.decodedXML(of: record.bytes, envelope: record.envelope)
        else { return nil }
        return String(decoding: xml, as: UTF8.self)
    }

    private func collectViolation(_ request: Request) async -> Response {
        var request = request
        let body = try? await request.collectBody(upTo: CSPViolationLog.maximumReportBytes)
        violations.record(body.map { String(buffer: $0) } ?? "(a report over \(CSPViolationLog.maximumReportBytes) bytes)")
        return Response(status: .noContent, headers: DebuggerHeaders.fields(contentType: "text/plain; charset=utf-8"))
    }

    /// `{"error": reason}`, with `"field"` naming the page's input it is about (`key`), when one is.
    static func error(_ status: HTTPResponse.Status, _ reason: String, field: String? = nil) -> Response {
        DebuggerHeaders.response(status, contentType: "application/json", ReportEndpoints.errorBody(reason, field: field))
    }
}

extension SignatureRequirement {
    /// The trusted keys, when the requirement is a ring.
    var ring: KeyRing? {
        if case .trustedKeys(let ring) = self { return ring }
        return nil
    }
}
