import Foundation

@testable import EntitlementTokens

/// Builds tokens the way issuers write them. Signatures here are placeholders:
/// decoding never checks them (signature tests live in Signature*Tests).
enum Fixtures {
    static let signature = "dGVzdC1zaWduYXR1cmUtYnl0ZXMtdGhhdC1hcmUtbm90LXZlcmlmaWVkLWhlcmU="

    /// The media token exactly as the vendor documents it (unclosed signatureInfo).
    static let vendorMedia = """
        <signatureInfo>\(signature)<signatureInfo><authToken><sessionGUID>ff22f3a4e2b2b5fcd1a0e1f8c8ac10b6</sessionGUID><requestorID>MSNBC</requestorID><resourceID>MSNBC</resourceID><ttl>420000</ttl><issueTime>2016-03-17 15:01:31 -0700</issueTime><mvpdId>Comcast_SSO</mvpdId></authToken>
        """

    static let rssResource =
        #"<rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/"><channel><title>mun2</title><item><title><![CDATA[Dia 2]]></title><guid>2847811</guid><media:rating scheme="urn:mpaa">tv-pg</media:rating></item></channel></rss>"#

    /// The RSS resource inside CDATA, with the nested-CDATA split issuers write.
    static let rssResourceInCDATA =
        #"<![CDATA[<rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/"><channel><title>mun2</title><item><title><![CDATA[Dia 2]]]]><![CDATA[></title><guid>2847811</guid><media:rating scheme="urn:mpaa">tv-pg</media:rating></item></channel></rss>]]>"#

    static func mediaElement(
        root: String = "authToken",
        requestor: String = "MSNBC",
        resourceXML: String = "MSNBC",
        ttl: String? = "420000",
        issueTime: String? = "2016-03-17 15:01:31 -0700",
        mvpd: String = "Comcast_SSO",
        extra: String = ""
    ) -> String {
        var body = "<sessionGUID>ff22f3a4e2b2b5fcd1a0e1f8c8ac10b6</sessionGUID><requestorID>\(requestor)</requestorID>"
        body += "<resourceID>\(resourceXML)</resourceID>"
        if let ttl { body += "<ttl>\(ttl)</ttl>" }
        if let issueTime { body += "<issueTime>\(issueTime)</issueTime>" }
        body += "<mvpdId>\(mvpd)</mvpdId>\(extra)"
        return "<\(root)>\(body)</\(root)>"
    }

    static func authenticationElement(expires: String = "2011/03/19 02:29:34 GMT +0200", extra: String = "") -> String {
        """
        <simpleAuthenticationToken><simpleTokenAuthenticationGuid>3f9ac1d2</simpleTokenAuthenticationGuid>\
        <simpleTokenRequestorID>TNT</simpleTokenRequestorID><simpleTokenDomainName>adobe.com</simpleTokenDomainName>\
        <simpleTokenExpires>\(expires)</simpleTokenExpires><simpleTokenMsoID>Cablevision</simpleTokenMsoID>\
        <simpleTokenDeviceID><simpleTokenFingerprint>3d1b7ac38fae5c1b4e5c1e8f8a0f3c2b9d4e6f10</simpleTokenFingerprint></simpleTokenDeviceID>\
        \(extra)</simpleAuthenticationToken>
        """
    }

    static func authorizationElement(ttl: String = "2011/03/19 02:29:34 GMT +0200") -> String {
        """
        <simpleAuthorizationToken><simpleTokenRequestorID>TNT</simpleTokenRequestorID>\
        <simpleTokenResourceID>TNT</simpleTokenResourceID><simpleTokenTTL>\(ttl)</simpleTokenTTL>\
        <simpleTokenMsoID>Cablevision</simpleTokenMsoID>\
        <simpleTokenDeviceID><simpleTokenFingerprint>3d1b7ac38fae5c1b4e5c1e8f8a0f3c2b9d4e6f10</simpleTokenFingerprint></simpleTokenDeviceID>\
        </simpleAuthorizationToken>
        """
    }

    /// Legacy form: `<signatureInfo>…<signatureInfo>` then the element.
    static func legacy(_ element: String, signature: String = signature) -> String {
        "<signatureInfo>\(signature)<signatureInfo>\(element)"
    }

    static func closed(_ element: String, signature: String = signature, after: Bool = false) -> String {
        after ? "\(element)<signatureInfo>\(signature)</signatureInfo>" : "<signatureInfo>\(signature)</signatureInfo>\(element)"
    }

    static func base64(_ text: String) -> String { Data(text.utf8).base64EncodedString() }

    static func base64url(_ text: String) -> String {
        base64(text).replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Percent-encodes everything outside the unreserved set, as a query string builder would.
    static func percentEncoded(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed)!
    }

    static func decode(_ text: String, configuration: DecoderConfiguration = .default) throws(TokenError) -> DecodedToken {
        try TokenDecoder(configuration: configuration).decode(text)
    }

    /// The error code decoding `text` fails with, or nil when it decodes.
    static func errorCode(_ text: String, configuration: DecoderConfiguration = .default) -> TokenError.Code? {
        errorCode(Array(text.utf8), configuration: configuration)
    }

    static func errorCode(_ bytes: [UInt8], configuration: DecoderConfiguration = .default) -> TokenError.Code? {
        do {
            _ = try TokenDecoder(configuration: configuration).decode(bytes)
            return nil
        } catch {
            return error.code
        }
    }
}
