import HTTPTypes
import HummingbirdTesting

/// The request shapes of the three proxy conventions.
extension TestClientProtocol {
    /// nginx `auth_request`: the original URI in `X-Original-URI`.
    func authRequest(_ originalURI: String, resource: String? = "TNT", headers: HTTPFields = [:]) async throws -> TestResponse {
        var fields = headers
        fields[HTTPField.Name("X-Original-URI")!] = originalURI
        if let resource { fields[HTTPField.Name("X-Token-Resource")!] = resource }
        return try await executeRequest(uri: "/v1/auth-request", method: .get, headers: fields, body: nil)
    }
}

extension TestResponse {
    subscript(_ name: String) -> String? { headers[HTTPField.Name(name)!] }
    var tokenStatus: String? { self["X-Token-Status"] }
    var bodyText: String { String(buffer: body) }
}
