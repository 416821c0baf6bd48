import HTTPTypes
import Hummingbird
import NIOCore

/// An answer as the gate writes it: a head and a body held whole (every
/// answer the gate makes is small or bounded: a manifest by its profile's
/// `manifest-max-bytes`). ``DirectAnswerHandler`` writes it from the event
/// loop; the framework's routes hand it on as a `Response`. Built here once,
/// so an answer reads the same whichever way it leaves.
struct GateAnswer: Sendable {
    var head: HTTPResponse
    var body: ByteBuffer

    init(_ head: HTTPResponse, body: ByteBuffer = ByteBuffer()) {
        self.head = head
        self.body = body
    }

    init(status: HTTPResponse.Status, headers: HTTPFields, body: ByteBuffer = ByteBuffer()) {
        self.init(HTTPResponse(status: status, headerFields: headers), body: body)
    }

    /// The same answer for the framework.
    var response: Response {
        Response(status: head.status, headers: head.headerFields, body: .init(byteBuffer: body))
    }

    static func plain(_ status: HTTPResponse.Status, _ text: String) -> GateAnswer {
        GateAnswer(
            status: status,
            headers: [.contentType: "text/plain; charset=utf-8", .cacheControl: "no-store"],
            body: ByteBuffer(string: text)
        )
    }

    static func json(_ status: HTTPResponse.Status, _ text: String) -> GateAnswer {
        GateAnswer(status: status, headers: [.contentType: "application/json", .cacheControl: "no-store"], body: ByteBuffer(string: text))
    }

    /// 405 with the `Allow` field RFC 9110 §15.5.6 requires (docs/openapi.yaml; schemathesis checks it).
    static func methodNotAllowed(allow: String) -> GateAnswer {
        var answer = plain(.methodNotAllowed, "use \(allow)\n")
        answer.head.headerFields[.allow] = allow
        return answer
    }
}
