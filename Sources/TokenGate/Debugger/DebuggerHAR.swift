import EntitlementTokens
import HARReport
import HTTPTypes
import Hummingbird

/// `POST /debugger/har` (docs/HAR.md#in-the-debugger): a customer's capture
/// uploaded from the debugger's page, read by the same library as
/// `tokeninspect har` — streamed, entry by entry, as the body arrives — with
/// the debugger's keys, and answered with the same report: the HTML page
/// (``HARReportHTML``, the timeline as SVG) or, with `?format=json`, the JSON
/// object of docs/CLI.md. Nothing is kept or sent anywhere: the body is
/// forgotten entry by entry, and the answer is the report.
///
/// The body is the HAR file itself (the page sends the chosen file as it is;
/// `curl --data-binary @capture.har` does the same), at most
/// ``maximumBytes``. A form is refused: a HAR is one file, and reading it
/// streamed needs no multipart framing around it.
struct DebuggerHAR: Sendable {
    /// The largest capture read: 64 MiB. A declared length over it is refused
    /// before a byte is read; an undeclared one as soon as it passes it.
    static let maximumBytes = 64 << 20
    /// Longest `?name=` kept (the name the report shows for the capture).
    static let maximumNameBytes = 256

    /// Why an upload gives no report, with a stable code for scripts and tests.
    enum Refusal: Error, Sendable, Equatable {
        /// Over ``maximumBytes`` (declared or counted): 413.
        case tooLarge(String)
        /// Not a HAR by the reader's rules (not JSON, no `log.entries`, …): 422.
        case notAHAR(String)
        /// A `multipart/form-data` body: 415.
        case form
        /// A query the route does not take: 400.
        case badQuery(String)

        var code: String {
            switch self {
            case .tooLarge: "HAR_TOO_LARGE"
            case .notAHAR: "NOT_A_HAR"
            case .form: "HAR_AS_FORM"
            case .badQuery: "BAD_QUERY"
            }
        }

        var status: HTTPResponse.Status {
            switch self {
            case .tooLarge: .contentTooLarge
            case .notAHAR: .unprocessableContent
            case .form: .unsupportedMediaType
            case .badQuery: .badRequest
            }
        }

        var reason: String {
            switch self {
            case .tooLarge(let reason), .notAHAR(let reason), .badQuery(let reason): reason
            case .form: "send the HAR file itself as the body (curl --data-binary @capture.har), not a form"
            }
        }
    }

    enum Format: String {
        case html, json
    }

    /// The token keys of the debugger and, under `serve --debugger`, the gate's CDN profiles and leeway.
    let keys: @Sendable () -> HARKeys

    func respond(to request: Request) async -> Response {
        do throws(Refusal) {
            let format = try Self.format(request)
            let name = request.uri.queryParameters.get("name").map { String($0.prefix(Self.maximumNameBytes)) } ?? "upload"
            let report = try await read(request)
            switch format {
            case .html:
                return Response(
                    status: .ok,
                    headers: DebuggerHeaders.fields(contentType: "text/html; charset=utf-8", styleHash: HARReportHTML.styleHash),
                    body: .init(byteBuffer: ByteBuffer(bytes: HARReportHTML(report: report, source: name).bytes))
                )
            case .json:
                return DebuggerHeaders.response(.ok, contentType: "application/json", bytes: HARReportJSON.encoded(report))
            }
        } catch {
            return Self.refusal(error)
        }
    }

    static func format(_ request: Request) throws(Refusal) -> Format {
        let query = request.uri.queryParameters
        for parameter in query where parameter.key != "format" && parameter.key != "name" {
            throw .badQuery("unknown parameter '\(parameter.key)'; /debugger/har takes format (html or json) and name")
        }
        guard let text = query.get("format") else { return .html }
        guard let format = Format(rawValue: text) else { throw .badQuery("format must be html or json") }
        return format
    }

    /// The body fed to the reader as it arrives, counted against ``maximumBytes``.
    func read(_ request: Request) async throws(Refusal) -> HARReport {
        if let type = request.headers[.contentType], type.lowercased().hasPrefix("multipart/form-data") { throw .form }
        if let length = request.headers[.contentLength].flatMap(Int.init), length > Self.maximumBytes {
            throw .tooLarge("the capture is \(length) bytes; the debugger reads at most \(Self.maximumBytes) (64 MiB): run tokeninspect har on it")
        }
        var reader = HARReader()
        var analysis = HARAnalysis(keys: keys())
        var total = 0
        do {
            for try await buffer in request.body {
                total += buffer.readableBytes
                guard total <= Self.maximumBytes else {
                    throw Refusal.tooLarge("the capture is over \(Self.maximumBytes) bytes (64 MiB): run tokeninspect har on it")
                }
                let chunk = Array(buffer.readableBytesView)
                try reader.feed(chunk.span) { analysis.add($0) }
            }
            guard total > 0 else { throw Refusal.notAHAR("the body is empty: send the HAR file as the body") }
            try reader.finish { analysis.add($0) }
        } catch let refusal as Refusal {
            throw refusal
        } catch let error as HARReadError {
            throw .notAHAR(error.description)
        } catch {
            throw .notAHAR("the upload ended before the capture was read whole")
        }
        return analysis.finish(readerNotes: reader.notes)
    }

    /// `{"error": reason, "code": code}` with the refusal's status and the debugger's headers.
    static func refusal(_ refusal: Refusal) -> Response {
        var body = JSONWriter(capacity: 256, controlEscapes: .unicode)
        body.beginObject()
        body.member("error")
        body.string(refusal.reason)
        body.member("code")
        body.string(refusal.code)
        body.endObject()
        body.raw("\n")
        return DebuggerHeaders.response(refusal.status, contentType: "application/json", bytes: body.bytes)
    }
}
