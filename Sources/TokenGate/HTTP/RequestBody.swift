import NIOCore

/// A request's body as a route answered from the event loop has it
/// (``DirectAnswerHandler``, or the framework's way in router-mode tests):
/// the auth and manifest routes judge the head and drop the body; the
/// playback routes read a small JSON body up to their bound.
enum RequestBody: Sendable {
    /// Not read: the route judges the head alone.
    case dropped
    /// Whole, within the route's bound.
    case whole(ByteBuffer)
    /// Longer than the route's bound (by its `Content-Length`, or as it
    /// arrived): not kept.
    case overLimit
}
