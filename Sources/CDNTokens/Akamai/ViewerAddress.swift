/// The viewer's IP address as an issuer writes it into a token (Akamai's
/// `ip=`, nginx's `$remote_addr`): the text of an IPv4 or IPv6 address. Shared
/// by the Akamai and secure_link issuers.
enum ViewerAddress {
    /// An IPv4 or IPv6 address as ``CDNIPAddress`` reads it, without brackets
    /// (an IPv6 zone `%…` is refused: an edge never sees one). The token
    /// keeps the text as given, as akamai-edgeauth and nginx do.
    static func check(_ ip: String) throws(CDNRefusal) {
        guard !ip.hasPrefix("["), CDNIPAddress(ip) != nil else {
            throw .format("the viewer's IP '\(String(decoding: Array(ip.utf8).prefix(45), as: UTF8.self))' is not an IPv4 or IPv6 address")
        }
    }
}
