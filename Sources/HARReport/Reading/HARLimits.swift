/// Every bound of reading a capture, in one value with safe defaults
/// (docs/DESIGN.md#reading-a-capture). A HAR is untrusted JSON of any size:
/// what is kept is bounded here, and everything else is validated as it
/// passes and forgotten, so memory stays flat whatever the file's size.
package struct HARLimits: Sendable, Hashable {
    /// Deepest nesting of the whole document (the top-level object is depth 1;
    /// an entry's header sits at depth 6).
    package var maxDepth = 32
    /// Longest string or number anywhere, as written: what a skipped body may be.
    /// Skipping costs a counter, not memory.
    package var maxSkippedStringBytes = 1 << 31
    /// Longest member name kept (names are short in every HAR writer's output).
    package var maxNameBytes = 1024
    /// Longest string kept in an entry other than a body: a URL, a header or cookie
    /// value. A longer one is skipped and said so.
    package var maxFieldBytes = 64 * 1024
    /// Longest body text kept (`postData.text`, `content.text`, as written). A longer
    /// one is skipped and said so; a Base64 body decodes to at most three quarters of it.
    package var maxBodyBytes = 1 << 20
    /// Most values (members and elements, nested ones included) kept of one entry;
    /// the rest of the entry is skipped and said so.
    package var maxValuesPerEntry = 20_000
    /// Most entries read; later ones are validated, counted and said so, not read.
    package var maxEntries = 200_000
    /// Most notes kept about what was skipped (the count goes on).
    package var maxNotes = 1000

    package init() {}
}
