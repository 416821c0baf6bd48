import CDNTokens
import EntitlementTokens
import Hummingbird
import HummingbirdCore

/// `POST /v1/verify` and `POST /v1/inspect` (docs/DESIGN.md#endpoints-and-answers): the body holds one or
/// many tokens in any form the CLI reads; the answer is a JSON array of the
/// report objects (docs/DESIGN.md#output-forms) — the library's ``TokenReport``, the value the CLI renders
/// too — with 200 whatever the verdicts, 400 for a bad request and 413 for a
/// body or a record count over the limits.
///
/// Expectations come as query parameters: `resource`, `device-id` or
/// `fingerprint`, `now` (read by ``TokenDateParser/parseNow(_:)``, as the CLI's
/// `--now`: ISO 8601, or epoch seconds or milliseconds by magnitude). The requestor, MVPD
/// allow-list, leeway and keys are the gate's. These endpoints never touch the
/// replay store (see ``GateVerifier``).
struct ReportEndpoints: Sendable {
    /// Bodies are read whole (bounded), then cut into records.
    static let maximumBodyBytes = 1 << 20
    static let maximumRecords = 1000

    let verifier: GateVerifier
    /// CDN pastes on `/v1/inspect`, verified against the gate's `--cdn-profile`s.
    let cdn: CDNPasteInspection
    /// The gate's clock, when `now` is not given.
    let clock: @Sendable () -> TokenTimestamp

    init(
        verifier: GateVerifier,
        cdn: CDNPasteInspection = CDNPasteInspection(),
        clock: @escaping @Sendable () -> TokenTimestamp = TokenTimestamp.now
    ) {
        self.verifier = verifier
        self.cdn = cdn
        self.clock = clock
    }

    enum Failure: Error {
        case badRequest(String)
        case tooLarge(String)
    }

    func verify(_ request: Request) async -> Response {
        // The method first: a GET with a bad query is a wrong method, not a bad request.
        guard request.method == .post else { return GateResponder.methodNotAllowed(allow: "POST") }
        if let unsupported = Self.unsupportedBody(request) { return unsupported }
        let query = request.uri.queryParameters
        let expectations: RequestExpectations
        let now: TokenTimestamp?
        do throws(Failure) {
            expectations = try Self.expectations(query)
            now = try Self.now(query)
        } catch {
            return Self.failure(error)
        }
        let verifier = verifier.reportVerifier(now: now)
        return await answer(request) { records in
            var reports: [TokenReport] = []
            reports.reserveCapacity(records.count)
            for (index, record) in records.enumerated() {
                let verdict = await verifier.verify(record, expecting: expectations)
                reports.append(TokenReport(input: index + 1, source: "body", line: record.line, verdict: verdict))
            }
            return reports
        }
    }

    /// Tokens and the SDK's other credentials (docs/DESIGN.md#the-sdks-other-credentials) decoded, not judged: a record
    /// the library's ``CredentialDetection`` finds to be a software statement,
    /// signed requestor ID or user metadata gets the library's
    /// ``CredentialReport`` (never verified, never decrypted here). `kind=`
    /// (`software-statement`, `signed-requestor-id`, `user-metadata`) reads
    /// every record as that kind — the only way a bare Base64 signed requestor
    /// ID is read as one.
    ///
    /// A body with a CDN token's form (docs/DESIGN.md#reading-cdn-tokens-back), or any
    /// body under `kind=akamai|cloudfront|cat|nginx-secure-link`, is CDN pastes only:
    /// the answer is the array `tokeninspect --format json` prints, each paste checked
    /// against the gate's profiles of its kind with `url`, `now` and `client-ip` (see
    /// ``CDNPasteInspection``).
    func inspect(_ request: Request) async -> Response {
        // The method before the query: a GET with a bad `kind` is 405, not 400.
        guard request.method == .post else { return GateResponder.methodNotAllowed(allow: "POST") }
        if let unsupported = Self.unsupportedBody(request) { return unsupported }
        let query = request.uri.queryParameters
        let kind: CredentialKind?
        let cdnKind: CDNTokenKind?
        let now: TokenTimestamp?
        do throws(Failure) {
            (kind, cdnKind) = try Self.inspectKind(query["kind"].map(String.init))
            // Read whatever the body holds: an unreadable `now` is 400 on every route that takes one.
            now = try Self.now(query)
        } catch {
            return Self.failure(error)
        }
        let input: [UInt8]
        do throws(Failure) {
            input = Array(try await Self.body(request).readableBytesView)
        } catch {
            return Self.failure(error)
        }
        let text = String(decoding: input, as: UTF8.self)
        if kind == nil, CDNPasteInspection.readsAsCDN(text, kind: cdnKind) {
            return inspectCDN(text, kind: cdnKind, now: now ?? clock(), query: query)
        }
        if let name = ["url", "client-ip"].first(where: { query[Substring($0)] != nil }) {
            return Self.failure(.badRequest("\(name) is for CDN tokens, and the body holds none"))
        }
        let records: [TokenRecord]
        do throws(Failure) {
            records = try Self.records(from: input)
        } catch {
            return Self.failure(error)
        }
        // One decoder a request: inspecting is for people and the debugger, not the hot path.
        let decoder = TokenDecoder()
        // The library's objects, one a line, as `tokeninspect --json` writes them.
        var body = JSONWriter(capacity: 2048 * max(1, records.count), controlEscapes: .unicode)
        body.beginArray()
        for (index, record) in records.enumerated() {
            body.element()
            body.raw("\n")
            let candidate = Self.credentialCandidate(record, in: input, recordCount: records.count)
            if let detected = Self.credential(CredentialDetection.detect(candidate, asking: kind), asked: kind) {
                var object = CredentialReport.make(detected, input: index + 1, source: "body", line: record.line, verifier: nil).json()
                while object.last == UInt8(ascii: "\n") { object.removeLast() }
                body.encoded(object)
                continue
            }
            let decoded: Result<DecodedToken, TokenError>
            if let error = record.error {
                decoded = .failure(error)
            } else {
                decoded = Result { () throws(TokenError) in try decoder.decode(record.bytes, envelope: record.envelope) }
            }
            var object = TokenReport(input: index + 1, source: "body", line: record.line, decoded: decoded).json()
            while object.last == UInt8(ascii: "\n") { object.removeLast() }
            body.encoded(object)
        }
        body.raw("\n")
        body.endArray()
        body.raw("\n")
        return Response(
            status: .ok,
            headers: [.contentType: "application/json", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(bytes: body.bytes))
        )
    }

    /// The `kind` parameter of `/v1/inspect`: a credential kind name, or nothing.
    static func credentialKind(_ name: String?) throws(Failure) -> CredentialKind? {
        guard let name, !name.isEmpty else { return nil }
        guard let kind = CredentialKind(rawValue: name) else {
            throw .badRequest("kind must be one of \(CredentialKind.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return kind
    }

    /// The `kind` parameter of `/v1/inspect`: a credential kind, a CDN token kind, or nothing.
    static func inspectKind(_ name: String?) throws(Failure) -> (CredentialKind?, CDNTokenKind?) {
        if let name, let cdn = CDNTokenKind(rawValue: name) { return (nil, cdn) }
        do throws(Failure) {
            return (try credentialKind(name), nil)
        } catch {
            let names = CredentialKind.allCases.map(\.rawValue) + CDNTokenKind.allCases.map(\.rawValue)
            throw .badRequest("kind must be one of \(names.joined(separator: ", "))")
        }
    }

    /// CDN pastes read back (docs/DESIGN.md#reading-cdn-tokens-back): `url` (the URL the
    /// edge was asked for; else each paste's own), `now`, `client-ip`.
    private func inspectCDN(_ text: String, kind: CDNTokenKind?, now: TokenTimestamp, query: FlatDictionary<Substring, Substring>) -> Response {
        var facts = CDNPasteInspection.Facts(url: nil, now: now, clientIP: nil)
        if let url = query["url"] {
            do { facts.url = try CDNURL(parsing: String(url)) } catch {
                // A path that could be resolved elsewhere is the readers' INVALID_URL; other garbage is a bad request.
                guard error.status == .invalidURL else { return Self.failure(.badRequest("url: \(error.reason)")) }
                facts.refusedURL = error
            }
        }
        if let ip = query["client-ip"] {
            guard CDNIPAddress(String(ip)) != nil else { return Self.failure(.badRequest("client-ip takes an IPv4 or IPv6 address")) }
            facts.clientIP = String(ip)
        }
        let pastes = CDNPasteInspection.pastes(text)
        guard !pastes.isEmpty else { return Self.failure(.badRequest("the body holds no token")) }
        guard pastes.count <= Self.maximumRecords else {
            return Self.failure(.tooLarge("the body holds \(pastes.count) pastes; at most \(Self.maximumRecords) a request"))
        }
        let reports = pastes.enumerated().map { index, paste in
            cdn.report(paste, input: index + 1, source: "body", kind: kind, facts: facts)
        }
        return Response(
            status: .ok,
            headers: [.contentType: "application/json", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(bytes: CDNReadingReport.jsonArray(reports)))
        )
    }

    /// The bytes the credential readers look at for `record`: its own, or —
    /// for a `{…}` document the splitter took for a REST response and found
    /// none in (user metadata, a registration body) — the document itself:
    /// the whole input when it is the only record, else its line.
    static func credentialCandidate(_ record: TokenRecord, in input: [UInt8], recordCount: Int) -> [UInt8] {
        guard record.error != nil, record.bytes.isEmpty, record.byteOffset >= 0, record.byteOffset < input.count else { return record.bytes }
        if recordCount == 1 { return Array(input[record.byteOffset...]) }
        let end = input[record.byteOffset...].firstIndex(of: UInt8(ascii: "\n")) ?? input.count
        return Array(input[record.byteOffset..<end])
    }

    /// `detected` when the credential readers report it (a credential, a
    /// refusal, or a JWKS where a kind was asked); nil for the token pipeline.
    static func credential(_ detected: DetectedCredential, asked kind: CredentialKind?) -> DetectedCredential? {
        switch detected {
        case .token: nil
        case .keySet: kind == nil ? nil : detected
        case .softwareStatement, .signedRequestorID, .userMetadata, .refused: detected
        }
    }

    private func answer(_ request: Request, _ build: ([TokenRecord]) async -> [TokenReport]) async -> Response {
        guard request.method == .post else { return GateResponder.methodNotAllowed(allow: "POST") }
        let records: [TokenRecord]
        do throws(Failure) {
            records = try await Self.records(request)
        } catch {
            return Self.failure(error)
        }
        let reports = await build(records)
        return Response(
            status: .ok,
            headers: [.contentType: "application/json", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(bytes: TokenReport.jsonArray(reports)))
        )
    }

    /// 415 for a body of a type these routes do not read (a request without
    /// `Content-Type` is read as text, as `tokeninspect` reads a file).
    static func unsupportedBody(_ request: Request) -> Response? {
        BodyMediaType.refusal(request.headers, accepting: BodyMediaType.tokens, absentIsAccepted: true).map { reason in
            GateResponder.json(.unsupportedMediaType, errorBody(reason))
        }
    }

    static func failure(_ failure: Failure) -> Response {
        switch failure {
        case .badRequest(let reason): GateResponder.json(.badRequest, errorBody(reason))
        case .tooLarge(let reason): GateResponder.json(.contentTooLarge, errorBody(reason))
        }
    }

    /// `{"error": reason}` and a newline, with `"field"` naming the input it is
    /// about when there is one (the debugger's page marks that input).
    static func errorBody(_ reason: String, field: String? = nil) -> String {
        var json = JSONWriter(capacity: 256, controlEscapes: .unicode)
        json.beginObject()
        json.member("error")
        json.string(reason)
        if let field {
            json.member("field")
            json.string(field)
        }
        json.endObject()
        json.raw("\n")
        return json.text
    }

    /// The body, bounded, cut into records by the library's splitter.
    static func records(_ request: Request) async throws(Failure) -> [TokenRecord] {
        try await records(from: body(request).readableBytesView)
    }

    /// The body, read whole up to ``maximumBodyBytes``.
    static func body(_ request: Request) async throws(Failure) -> ByteBuffer {
        if let length = request.headers[.contentLength].flatMap(Int.init), length > maximumBodyBytes {
            throw .tooLarge("the body is \(length) bytes; at most \(maximumBodyBytes) are read")
        }
        var request = request
        do {
            return try await request.collectBody(upTo: maximumBodyBytes)
        } catch {
            throw .tooLarge("the body is over \(maximumBodyBytes) bytes")
        }
    }

    /// `bytes` cut into records by the library's splitter, at most ``maximumRecords``.
    static func records(from bytes: some Collection<UInt8>) throws(Failure) -> [TokenRecord] {
        var splitter = RecordSplitter()
        var records = splitter.feed(bytes)
        records += splitter.finish()
        guard !records.isEmpty else { throw .badRequest("the body holds no token") }
        guard records.count <= maximumRecords else {
            throw .tooLarge("the body holds \(records.count) tokens; at most \(maximumRecords) a request")
        }
        return records
    }

    static func expectations(_ query: FlatDictionary<Substring, Substring>) throws(Failure) -> RequestExpectations {
        let resource = query["resource"].map(String.init)
        switch (query["device-id"], query["fingerprint"]) {
        case (let id?, nil): return RequestExpectations(resourceID: resource, device: .deviceID(String(id)))
        case (nil, let fingerprint?): return RequestExpectations(resourceID: resource, device: .fingerprint(String(fingerprint)))
        case (nil, nil): return RequestExpectations(resourceID: resource)
        case (_?, _?): throw .badRequest("give device-id or fingerprint, not both")
        }
    }

    static func now(_ query: FlatDictionary<Substring, Substring>) throws(Failure) -> TokenTimestamp? {
        guard let text = query["now"] else { return nil }
        do {
            return try TokenDateParser.parseNow(String(text)).timestamp
        } catch {
            throw .badRequest("now: \(error)")
        }
    }
}
