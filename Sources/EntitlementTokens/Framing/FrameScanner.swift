/// A resumable lexer for the top level of a token: the signature block, the
/// token element's extent, and the markup that must never appear.
///
/// Why not let libxml2 find these? The legacy form `<signatureInfo>…<signatureInfo>`
/// is not well-formed XML, and the signature covers the token element's exact
/// bytes, which a SAX parser does not report reliably. So this scanner finds the
/// byte ranges, and libxml2 then parses exactly the token element's range; if the
/// two ever disagreed, libxml2 would see a malformed document and refuse it.
///
/// The scanner is incremental: ``scan(_:)`` may be called again after more bytes
/// were appended to the same buffer and resumes where it stopped, never rescanning
/// more than the markup it was in the middle of. ``RecordSplitter`` uses that to
/// find where a raw XML token spread over several lines ends.
///
/// It records the first error it meets and keeps tracking structure leniently,
/// so a broken record still ends where its token ends.
struct FrameScanner {
    private enum Mode { case top, signatureText, content }

    private enum TagRole {
        case signatureOpen, tokenOpen, child
        case signatureClose(TokenFrame.SignatureForm)
        case stray
    }

    private enum Delimited { case comment, processingInstruction, cdata, bogus }

    private enum Pending {
        case none
        /// A `<` whose kind is not known yet (too few bytes).
        case markup(start: Int)
        /// `nameEnd` and `role` are known once the name was read; `resume` is where attribute scanning goes on.
        case startTag(start: Int, nameEnd: Int?, role: TagRole, resume: Int, quote: UInt8, clean: Bool)
        case endTag(start: Int, nameEnd: Int?, role: TagRole, resume: Int, clean: Bool)
        case delimited(start: Int, kind: Delimited, resume: Int)
        case doctype(start: Int, resume: Int, brackets: Int, quote: UInt8)
    }

    private var mode = Mode.top
    private var pending = Pending.none
    private var position = 0
    private var depth = 0
    /// Nothing but white space (and a byte order mark) seen yet: an XML declaration may come.
    private var atDocumentStart = true

    private(set) var signatureBlocks = 0
    private(set) var tokenElements = 0
    /// The top-level element is none of the token roots (an HTML error page, say):
    /// the parser will refuse it, so ``RecordSplitter`` need not read on.
    private(set) var tokenElementHasUnknownName = false
    private var signatureOpenStart: Int?
    private var signatureTextStart = 0
    private var signature: (text: Range<Int>, form: TokenFrame.SignatureForm, beforeToken: Bool)?
    private var tokenStart: Int?
    private var tokenEnd: Int?
    private(set) var firstError: TokenError?
    /// Whether plain tags take the one-step path (``scanPlainTag(at:in:)``).
    /// Off only to check that path against the general one, which must read
    /// every input the same (FrameScannerPathTests, and the fuzz oracle).
    private let takesPlainTagsInOneStep: Bool

    init(takesPlainTagsInOneStep: Bool = true) {
        self.takesPlainTagsInOneStep = takesPlainTagsInOneStep
    }

    /// A signature block and a token element are both complete and nothing is open.
    var isComplete: Bool {
        if case .none = pending, mode == .top, signatureBlocks >= 1, tokenEnd != nil { return true }
        return false
    }

    /// An element, a CDATA section, the signature block or any other markup is
    /// open: what comes next belongs to it (``RecordSplitter`` continues the record).
    var isMarkupOpen: Bool {
        if case .none = pending { return mode != .top }
        return true
    }

    /// True while nothing but white space and an XML declaration has been seen.
    var sawOnlyDeclaration: Bool {
        if case .none = pending { return mode == .top && tokenStart == nil && signatureBlocks == 0 && firstError == nil }
        return false
    }

    // MARK: - Scanning

    mutating func scan(_ buffer: Span<UInt8>) {
        while true {
            if case .none = pending {
            } else {
                guard resumePending(buffer) else { return }
                continue
            }
            guard position < buffer.count else { return }
            switch mode {
            case .top:
                if position == 0, ByteRules.startsWithByteOrderMark(buffer) {
                    position = ByteRules.byteOrderMarkCount
                    continue
                }
                let byte = buffer[position]
                if byte.isASCIIWhitespace {
                    position += 1
                } else if byte == UInt8(ascii: "<") {
                    if takesPlainTagsInOneStep, scanPlainTag(at: position, in: buffer) { continue }
                    pending = .markup(start: position)
                } else {
                    fail(.unexpectedTopLevelContent, "text outside the token element and the signature block", at: position)
                    atDocumentStart = false
                    position = ByteSearch.firstIndex(of: UInt8(ascii: "<"), in: buffer, from: position) ?? buffer.count
                }
            case .signatureText, .content:
                // Plain tag after plain tag without going round the outer loop,
                // whose test of `pending` (a large enum) costs more than the tag.
                while true {
                    guard let next = ByteSearch.firstIndex(of: UInt8(ascii: "<"), in: buffer, from: position) else {
                        position = buffer.count
                        return
                    }
                    position = next
                    guard takesPlainTagsInOneStep, scanPlainTag(at: next, in: buffer) else {
                        pending = .markup(start: next)
                        break
                    }
                    if mode == .top { break }
                }
            }
        }
    }

    /// The common cases, taken in one step: a complete `<name>` (anywhere) with
    /// nothing but the name in the tag, or a complete end tag inside the token
    /// element. Does exactly what the general path (``classifyMarkup(at:in:)``
    /// and the tag continuations) does for such a tag; false, having changed
    /// nothing, for anything else, which then goes the general way.
    @inline(__always)
    private mutating func scanPlainTag(at start: Int, in buffer: Span<UInt8>) -> Bool {
        var index = start &+ 1
        guard index < buffer.count else { return false }
        if buffer[index] == UInt8(ascii: "/") {
            // Inside the token element any end tag just closes a child, whatever
            // its name and contents (libxml2 checks those): find its `>`.
            guard mode == .content, let close = ByteSearch.firstIndex(of: UInt8(ascii: ">"), in: buffer, from: index &+ 1) else { return false }
            atDocumentStart = false
            position = close &+ 1
            depth -= 1
            if depth == 0 {
                mode = .top
                if tokenEnd == nil { tokenEnd = close &+ 1 }
            }
            return true
        }
        let nameStart = index
        guard index < buffer.count, buffer[index].isASCIILetter || buffer[index] == UInt8(ascii: "_") else { return false }
        // The name ends where the general path ends it (``nameEnd(in:from:)``):
        // at the first white space, `/` or `>`. A tag whose name ends at `>` is
        // read by the general path exactly as here, whatever the name's bytes.
        index = Self.plainNameEnd(in: buffer, from: index)
        guard index < buffer.count, buffer[index] == UInt8(ascii: ">") else { return false }
        atDocumentStart = false
        position = index &+ 1
        let role = roleOfStartTag(name: buffer.extracting(nameStart..<index), at: start)
        finishStartTag(role: role, start: start, end: index &+ 1, selfClosing: false, clean: true)
        return true
    }

    /// The first white space, `/` or `>` at or after `from`, or `buffer.count`:
    /// what ``nameEnd(in:from:)`` finds.
    @inline(__always)
    private static func plainNameEnd(in buffer: Span<UInt8>, from: Int) -> Int {
        var index = from
        while index < buffer.count {
            let byte = buffer[index]
            if byte == UInt8(ascii: ">") || byte == UInt8(ascii: "/") || byte.isASCIIWhitespace { return index }
            index &+= 1
        }
        return index
    }

    /// Continues the markup in progress; false when it needs more bytes.
    private mutating func resumePending(_ buffer: Span<UInt8>) -> Bool {
        switch pending {
        case .none:
            return true
        case .markup(let start):
            return classifyMarkup(at: start, in: buffer)
        case .startTag(let start, let nameEnd, let role, let resume, let quote, let clean):
            return continueStartTag(start: start, nameEnd: nameEnd, role: role, resume: resume, quote: quote, clean: clean, in: buffer)
        case .endTag(let start, let nameEnd, let role, let resume, let clean):
            return continueEndTag(start: start, nameEnd: nameEnd, role: role, resume: resume, clean: clean, in: buffer)
        case .delimited(let start, let kind, let resume):
            return continueDelimited(start: start, kind: kind, resume: resume, in: buffer)
        case .doctype(let start, let resume, let brackets, let quote):
            return continueDoctype(start: start, resume: resume, brackets: brackets, quote: quote, in: buffer)
        }
    }

    // Static strings rather than arrays: no `swift_once` and retain/release per use.
    private static var commentOpen: StaticString { "<!--" }
    private static var cdataOpen: StaticString { "<![CDATA[" }
    private static var doctypeOpen: StaticString { "<!DOCTYPE" }

    private mutating func classifyMarkup(at start: Int, in buffer: Span<UInt8>) -> Bool {
        guard start + 1 < buffer.count else { return false }
        let wasAtStart = atDocumentStart
        atDocumentStart = false
        switch buffer[start + 1] {
        case UInt8(ascii: "/"):
            pending = .endTag(start: start, nameEnd: nil, role: .stray, resume: start + 2, clean: true)
        case UInt8(ascii: "?"):
            atDocumentStart = wasAtStart
            pending = .delimited(start: start, kind: .processingInstruction, resume: start + 2)
        case UInt8(ascii: "!"):
            // Comment, then CDATA (unrolled: no list built per markup).
            for kind in 0..<2 {
                let (prefix, delimited) = kind == 0 ? (Self.commentOpen, Delimited.comment) : (Self.cdataOpen, Delimited.cdata)
                switch ByteSearch.matches(prefix, in: buffer, at: start) {
                case .some(true):
                    pending = .delimited(start: start, kind: delimited, resume: start + prefix.utf8CodeUnitCount)
                    return true
                case .none:
                    atDocumentStart = wasAtStart
                    return false
                case .some(false):
                    continue
                }
            }
            switch ByteSearch.matches(Self.doctypeOpen, in: buffer, at: start) {
            case .some(true):
                pending = .doctype(start: start, resume: start + Self.doctypeOpen.utf8CodeUnitCount, brackets: 0, quote: 0)
            case .none:
                atDocumentStart = wasAtStart
                return false
            case .some(false):
                pending = .delimited(start: start, kind: .bogus, resume: start + 2)
            }
        case let byte where Self.isNameStart(byte):
            pending = .startTag(start: start, nameEnd: nil, role: .child, resume: start + 1, quote: 0, clean: true)
        default:
            // A `<` that starts no markup: libxml2 would refuse it; record it and move on as text.
            fail(.malformedXML, "'<' does not start a tag", at: start)
            pending = .none
            position = start + 1
        }
        return true
    }

    private mutating func continueStartTag(
        start: Int,
        nameEnd: Int?,
        role: TagRole,
        resume: Int,
        quote: UInt8,
        clean: Bool,
        in buffer: Span<UInt8>
    ) -> Bool {
        var role = role
        var nameEnd = nameEnd
        var resume = resume
        if nameEnd == nil {
            guard let end = Self.nameEnd(in: buffer, from: start + 1) else { return false }
            nameEnd = end
            resume = end
            role = roleOfStartTag(name: buffer.extracting((start + 1)..<end), at: start)
        }
        var quote = quote
        var clean = clean
        var index = resume
        while index < buffer.count {
            let byte = buffer[index]
            if quote != 0 {
                if byte == quote { quote = 0 }
            } else if byte == UInt8(ascii: ">") {
                let selfClosing = index > nameEnd! && buffer[index - 1] == UInt8(ascii: "/")
                pending = .none
                position = index + 1
                finishStartTag(role: role, start: start, end: index + 1, selfClosing: selfClosing, clean: clean)
                return true
            } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                quote = byte
                clean = false
            } else if !byte.isASCIIWhitespace {
                clean = false
            }
            index += 1
        }
        pending = .startTag(start: start, nameEnd: nameEnd, role: role, resume: index, quote: quote, clean: clean)
        return false
    }

    private mutating func roleOfStartTag(name: Span<UInt8>, at start: Int) -> TagRole {
        let isSignature = ByteRules.isSignatureInfo(name)
        switch mode {
        case .content:
            // Every field of every token comes here: the errors are made out of line.
            if isSignature || ByteRules.isTokenRoot(name) {
                reservedNameInsideToken(name, isSignature: isSignature, at: start)
            }
            return .child
        case .signatureText:
            if isSignature { return .signatureClose(.legacy) }
            return startTagInSignatureText(name: name, at: start)
        case .top:
            if isSignature {
                if signatureBlocks > 0 || signatureOpenStart != nil {
                    fail(.duplicateSignatureBlock, "a second signatureInfo block", at: start)
                }
                return .signatureOpen
            }
            tokenElements += 1
            if tokenElements > 1 {
                secondTokenElement(name, at: start)
            } else {
                tokenElementHasUnknownName = !ByteRules.isTokenRoot(name)
            }
            return .tokenOpen
        }
    }

    @inline(never)
    private mutating func reservedNameInsideToken(_ name: Span<UInt8>, isSignature: Bool, at start: Int) {
        if isSignature {
            fail(.duplicateSignatureBlock, "a second signatureInfo, nested inside the token element", at: start)
        } else {
            fail(.duplicateTokenElement, "a second token element <\(name.decodedAsUTF8)>, nested inside the token element", at: start)
        }
    }

    @inline(never)
    private mutating func startTagInSignatureText(name: Span<UInt8>, at start: Int) -> TagRole {
        fail(.unterminatedSignatureBlock, "signatureInfo is not closed before <\(name.decodedAsUTF8)>", at: start)
        closeSignatureText(at: start, form: nil)
        return roleOfStartTag(name: name, at: start)
    }

    @inline(never)
    private mutating func secondTokenElement(_ name: Span<UInt8>, at start: Int) {
        fail(.duplicateTokenElement, "a second token element <\(name.decodedAsUTF8)>", at: start)
    }

    private mutating func finishStartTag(role: TagRole, start: Int, end: Int, selfClosing: Bool, clean: Bool) {
        switch role {
        case .signatureOpen:
            if !clean {
                fail(.invalidSignatureBlock, "signatureInfo takes no attributes", at: start)
            }
            if selfClosing { return }
            signatureOpenStart = start
            signatureTextStart = end
            mode = .signatureText
        case .signatureClose(let form):
            if !clean { fail(.invalidSignatureBlock, "the tag that ends signatureInfo takes no attributes", at: start) }
            closeSignatureText(at: start, form: form)
        case .tokenOpen:
            if tokenStart == nil { tokenStart = start }
            if selfClosing {
                if tokenEnd == nil { tokenEnd = end }
            } else {
                depth = 1
                mode = .content
            }
        case .child:
            if !selfClosing { depth += 1 }
        case .stray:
            break
        }
    }

    /// Ends the signature text at `start`; a nil form means it was never properly closed.
    private mutating func closeSignatureText(at start: Int, form: TokenFrame.SignatureForm?) {
        mode = .top
        signatureOpenStart = nil
        guard let form else { return }
        signatureBlocks += 1
        if signature == nil {
            signature = (signatureTextStart..<start, form, tokenStart == nil)
        }
    }

    private mutating func continueEndTag(
        start: Int,
        nameEnd: Int?,
        role: TagRole,
        resume: Int,
        clean: Bool,
        in buffer: Span<UInt8>
    ) -> Bool {
        var nameEnd = nameEnd
        var resume = resume
        var role = role
        if nameEnd == nil {
            guard let end = Self.nameEnd(in: buffer, from: start + 2) else { return false }
            nameEnd = end
            resume = end
            let name = buffer.extracting((start + 2)..<end)
            switch mode {
            case .signatureText:
                if ByteRules.isSignatureInfo(name) {
                    role = .signatureClose(.closed)
                } else {
                    fail(.unterminatedSignatureBlock, "signatureInfo is not closed before </\(name.decodedAsUTF8)>", at: start)
                    closeSignatureText(at: start, form: nil)
                    fail(.unexpectedTopLevelContent, "an end tag outside any element", at: start)
                }
            case .top:
                fail(.unexpectedTopLevelContent, "an end tag outside any element", at: start)
            case .content:
                role = .child
            }
        }
        var clean = clean
        var index = resume
        while index < buffer.count {
            let byte = buffer[index]
            if byte == UInt8(ascii: ">") {
                pending = .none
                position = index + 1
                switch role {
                case .signatureClose(let form):
                    if !clean { fail(.invalidSignatureBlock, "malformed </signatureInfo>", at: start) }
                    closeSignatureText(at: start, form: form)
                case .child:
                    depth -= 1
                    if depth == 0 {
                        mode = .top
                        if tokenEnd == nil { tokenEnd = index + 1 }
                    }
                default:
                    break
                }
                return true
            }
            if !byte.isASCIIWhitespace { clean = false }
            index += 1
        }
        pending = .endTag(start: start, nameEnd: nameEnd, role: role, resume: index, clean: clean)
        return false
    }

    private static var commentClose: StaticString { "-->" }
    private static var processingInstructionClose: StaticString { "?>" }
    private static var cdataClose: StaticString { "]]>" }
    private static var bogusClose: StaticString { ">" }

    private mutating func continueDelimited(start: Int, kind: Delimited, resume: Int, in buffer: Span<UInt8>) -> Bool {
        let terminator: StaticString =
            switch kind {
            case .comment: Self.commentClose
            case .processingInstruction: Self.processingInstructionClose
            case .cdata: Self.cdataClose
            case .bogus: Self.bogusClose
            }
        guard let found = ByteSearch.firstIndex(of: terminator, in: buffer, from: resume) else {
            // Keep the last bytes that could be the start of the terminator.
            pending = .delimited(start: start, kind: kind, resume: max(resume, buffer.count - terminator.utf8CodeUnitCount + 1))
            return false
        }
        pending = .none
        position = found + terminator.utf8CodeUnitCount
        switch kind {
        case .comment:
            fail(.commentForbidden, "comments are not allowed in a token", at: start)
        case .processingInstruction:
            if atDocumentStart, let declaration = XMLDeclaration.body(in: buffer, start: start, end: found) {
                if let (code, message) = XMLDeclaration.problem(in: buffer.extracting(declaration)) {
                    fail(code, message, at: start)
                }
            } else {
                fail(
                    .processingInstructionForbidden,
                    "processing instructions are not allowed in a token (an XML declaration only at the very start)",
                    at: start
                )
            }
            atDocumentStart = false
        case .cdata:
            switch mode {
            case .content: break
            case .top: fail(.unexpectedTopLevelContent, "CDATA outside the token element", at: start)
            case .signatureText: fail(.invalidSignatureBlock, "CDATA inside signatureInfo", at: start)
            }
        case .bogus:
            fail(.malformedXML, "'<!' starts no markup allowed in a token", at: start)
        }
        return true
    }

    private mutating func continueDoctype(start: Int, resume: Int, brackets: Int, quote: UInt8, in buffer: Span<UInt8>) -> Bool {
        var brackets = brackets
        var quote = quote
        var index = resume
        while index < buffer.count {
            let byte = buffer[index]
            if quote != 0 {
                if byte == quote { quote = 0 }
            } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                quote = byte
            } else if byte == UInt8(ascii: "[") {
                brackets += 1
            } else if byte == UInt8(ascii: "]") {
                brackets = max(0, brackets - 1)
            } else if byte == UInt8(ascii: ">") && brackets == 0 {
                pending = .none
                position = index + 1
                fail(.doctypeForbidden, "DOCTYPE is not allowed in a token (no DTDs, no entity declarations)", at: start)
                return true
            }
            index += 1
        }
        pending = .doctype(start: start, resume: index, brackets: brackets, quote: quote)
        return false
    }

    // MARK: - Result

    /// The frame of a complete record, or the first problem found in it.
    func frame(in buffer: Span<UInt8>) throws(TokenError) -> TokenFrame {
        func located(_ error: TokenError) -> TokenError {
            var error = error
            if let offset = error.location?.byteOffset { error.location = SourceLocation(offset: offset, in: buffer) }
            return error
        }
        if let firstError { throw located(firstError) }
        var openTokenElement = mode == .content
        var openStart: Int? = nil
        switch pending {
        case .none: break
        case .startTag(let start, _, let role, _, _, _):
            if case .tokenOpen = role { openTokenElement = true }
            if mode == .top, !Self.mayStartSignatureInfo(buffer, at: start + 1) {
                openTokenElement = true  // a top-level start tag cut off before its name ended
            }
            openStart = start
        case .markup(let start), .endTag(let start, _, _, _, _), .delimited(let start, _, _), .doctype(let start, _, _, _):
            openStart = start
        }
        if openTokenElement {
            throw located(
                TokenError(
                    .unterminatedTokenElement,
                    stage: .framing,
                    "the token element is not closed before the end of the input",
                    at: SourceLocation(byteOffset: tokenStart ?? openStart ?? 0)
                )
            )
        }
        if mode == .signatureText {
            throw located(
                TokenError(
                    .unterminatedSignatureBlock,
                    stage: .framing,
                    "signatureInfo is not closed before the end of the input",
                    at: SourceLocation(byteOffset: signatureOpenStart ?? 0)
                )
            )
        }
        if let openStart {
            throw located(
                TokenError(
                    .malformedXML,
                    stage: .framing,
                    "markup is not closed before the end of the input",
                    at: SourceLocation(byteOffset: openStart)
                )
            )
        }
        guard let signature else {
            throw TokenError(.missingSignatureBlock, stage: .framing, "no signatureInfo block")
        }
        guard let tokenStart, let tokenEnd else {
            throw TokenError(.missingTokenElement, stage: .framing, "no token element")
        }
        return TokenFrame(
            signatureText: signature.text,
            signatureForm: signature.form,
            signaturePlacement: signature.beforeToken ? .beforeToken : .afterToken,
            tokenElement: tokenStart..<tokenEnd
        )
    }

    // MARK: - Helpers

    private mutating func fail(_ code: TokenError.Code, _ message: String, at offset: Int) {
        guard firstError == nil else { return }
        firstError = TokenError(code, stage: .framing, message, at: SourceLocation(byteOffset: offset))
    }

    /// true/false when decidable, nil when the buffer ends before a mismatch.
    /// Whether the bytes from `start` are `signatureInfo`, or its beginning where `buffer` ends.
    private static func mayStartSignatureInfo(_ buffer: Span<UInt8>, at start: Int) -> Bool {
        var index = start
        for byte in ByteRules.signatureInfo.utf8 {
            guard index < buffer.count else { return true }
            if buffer[index] != byte { return false }
            index += 1
        }
        return true
    }

    @inline(__always) private static func isNameStart(_ byte: UInt8) -> Bool {
        byte.isASCIILetter || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ":") || byte >= 0x80
    }

    /// The end of the tag name starting at `from`, or nil if the buffer ends first.
    private static func nameEnd(in buffer: Span<UInt8>, from: Int) -> Int? {
        var index = from
        while index < buffer.count {
            let byte = buffer[index]
            if byte.isASCIIWhitespace || byte == UInt8(ascii: ">") || byte == UInt8(ascii: "/") { return index }
            index += 1
        }
        return nil
    }
}
