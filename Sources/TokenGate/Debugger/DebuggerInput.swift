import EntitlementTokens
import Hummingbird

/// The body of `POST /debugger/report`: the pasted text cut into records,
/// and a pasted public key when one came. A text body (any type but
/// `multipart/form-data`) is the pasted text alone, as `/v1/verify` reads a
/// body; a `multipart/form-data` body (``DebuggerFormData``) has an `input`
/// part and may have a `key` part. Only this route reads a `key` part: the
/// gate's `/v1/*` routes read every body as tokens.
struct DebuggerInput: Sendable {
    static let partNames = ["input", "key"]

    var records: [TokenRecord]
    /// The pasted text the records were cut from.
    var text: [UInt8]
    /// The `key` part's bytes, as sent (``PastedKey`` reads them).
    var key: [UInt8]?

    init(_ request: Request) async throws(ReportEndpoints.Failure) {
        let boundary: String?
        do throws(DebuggerFormData.Invalid) {
            boundary = try DebuggerFormData.boundary(ofContentType: request.headers[.contentType])
        } catch {
            throw .badRequest(error.reason)
        }
        let body = try await ReportEndpoints.body(request)
        guard let boundary else {
            text = Array(body.readableBytesView)
            records = try ReportEndpoints.records(from: text)
            key = nil
            return
        }
        let form: DebuggerFormData
        do throws(DebuggerFormData.Invalid) {
            form = try DebuggerFormData(body: Array(body.readableBytesView), boundary: boundary, allowedNames: Self.partNames)
        } catch {
            throw .badRequest(error.reason)
        }
        guard let input = form.content("input") else { throw .badRequest("the multipart body has no 'input' part (the tokens)") }
        text = input
        records = try ReportEndpoints.records(from: input)
        key = form.content("key")
    }
}
