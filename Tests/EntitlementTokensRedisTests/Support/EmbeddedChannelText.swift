import NIOCore
import NIOEmbedded

extension EmbeddedChannel {
    /// Every outbound buffer written so far, read off as one string.
    func outboundText() throws -> String {
        var text = ""
        while var buffer = try readOutbound(as: ByteBuffer.self) {
            text += buffer.readString(length: buffer.readableBytes) ?? ""
        }
        return text
    }
}
