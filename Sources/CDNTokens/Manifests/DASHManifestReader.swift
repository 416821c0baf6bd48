import EntitlementTokens

/// Reads an MPD (ISO/IEC 23009-1) once and says where each URI a player
/// fetches lies in its bytes, resolved and judged, so that
/// ``ParsedManifest/rewritten(for:)`` splices each viewer's token in one pass
/// (docs/DESIGN.md#the-mpd-reader).
///
/// What is rewritten: `BaseURL` text (MPD, Period, AdaptationSet,
/// Representation), `Location`, `SegmentTemplate@media`, `@initialization`,
/// `@index`, `@bitstreamSwitching`, `Initialization@sourceURL`,
/// `RepresentationIndex@sourceURL`, `BitstreamSwitching@sourceURL`,
/// `SegmentURL@media` and `@index`.
///
/// How it resolves: a `BaseURL` against its parent level's base (the MPD's
/// URL above the MPD); a segment URI against the base of the level its
/// segment element is in; `Location` against the MPD's URL. When a level has
/// several `BaseURL`s (alternatives a player may choose between), each is
/// rewritten against the parent's base, and the first is the base of what lies
/// below: every segment URI is written absolute, so the choice no longer
/// changes where a segment is fetched from.
///
/// What is refused, because the rewriting could not be certain: a `BaseURL`
/// after a segment element or a child level at its level (players resolve in
/// schema order), or beneath a level whose segment URIs were written absolute
/// (the player would resolve the inherited template against it, but the
/// written URI no longer can); a segment element after a child level; remote
/// elements (`xlink:href`), `PatchLocation`, `ContentSteering`,
/// `BaseURL@byteRange`, `UrlQueryInfo@useMPDUrlQuery` (it would append the
/// gate's query, the session, to segment requests); a DASH element out of place or under another
/// namespace; markup, comments or CDATA inside `BaseURL` or `Location`; a
/// template identifier DASH does not define; a `$` in a base under a template;
/// a `Representation@id` that `$RepresentationID$` would turn into a path
/// separator, an escape or a dot segment.
///
/// A `BaseURL` that is itself the media file (a Representation with no
/// `SegmentTemplate@media` and no `SegmentList` in effect: the on-demand
/// profile's `SegmentBase`) gets the token, as a media URI; any other inside
/// `BaseURL` is made absolute on the CDN without one.
enum DASHManifestReader {
    static func read(_ bytes: [UInt8], url: CDNURL, scope: ManifestScope, limits: ManifestLimits) throws(ManifestError) -> ParsedManifest {
        do {
            var reading = try MPDReading(bytes, url: url, scope: scope, limits: limits)
            return try reading.run()
        } catch {
            throw error.at(line: error.offset.map { line(of: $0, in: bytes) }, offset: nil)
        }
    }

    /// The 1-based line `offset` is on.
    static func line(of offset: Int, in bytes: [UInt8]) -> Int {
        var line = 1
        for byte in bytes[..<min(max(offset, 0), bytes.count)] where byte == 0x0A { line += 1 }
        return line
    }

    /// The DASH elements the reader places; one of these names in another
    /// namespace is refused rather than guessed at.
    static let placedNames: Set<String> = [
        "MPD", "Period", "AdaptationSet", "Representation", "BaseURL", "Location", "SegmentTemplate", "SegmentList",
        "SegmentBase", "Initialization", "RepresentationIndex", "BitstreamSwitching", "SegmentURL", "PatchLocation",
        "ContentSteering",
    ]
    static let xlinkNamespace = "http://www.w3.org/1999/xlink"
}

/// One reading of one MPD: the open elements, each level's bases, and the edits.
private struct MPDReading {
    enum Kind {
        case mpd, period, adaptationSet, representation
        case segmentBase, segmentList, segmentTemplate
        case baseURL, location
        case other

        var isLevel: Bool { self == .mpd || self == .period || self == .adaptationSet || self == .representation }
        var isSegmentInformation: Bool { self == .segmentBase || self == .segmentList || self == .segmentTemplate }
    }

    /// What an MPD, Period, AdaptationSet or Representation knows of its bases.
    struct Level {
        /// What this level's `BaseURL`s resolve against.
        var parentBase: ManifestURI
        /// What the URIs below resolve against: the first `BaseURL`, else the parent's base.
        var base: ManifestURI
        /// `BaseURL`s read here, made into links when the level ends (their role depends on what follows).
        var baseURLs: [(range: Range<Int>, reference: ManifestURI, offset: Int)] = []
        /// A segment element or a child level began here: a `BaseURL` now would come too late.
        var resolvableSeen = false
        /// A child level began here: segment information now would not be inherited in order.
        var childLevelSeen = false
        /// An ancestor level wrote segment URIs absolute before this level began.
        var segmentLinksAbove = false
        /// This level wrote segment URIs absolute.
        var segmentLinksHere = false
        /// A `SegmentTemplate@media` or a `SegmentList` applies here (own or inherited).
        var mediaInScope = false
        /// A Representation fetches this level's `BaseURL` itself.
        var fetched = false
    }

    struct Frame {
        var kind: Kind
        /// The index in `levels` of the nearest level at or above this element.
        var level: Int
        var textRanges: [Range<Int>] = []
        var offset: Int
    }

    var scanner: MPDScanner
    let mpdURL: ManifestURI
    let scope: ManifestScope
    let limits: ManifestLimits
    var frames: [Frame] = []
    var levels: [Level] = []
    var edits: [ManifestEdit] = []
    var isLive = false
    var durationSeconds: Double? = nil
    var representationIDs: [(id: String, offset: Int)] = []
    var templateNamesRepresentationID = false

    init(_ bytes: [UInt8], url: CDNURL, scope: ManifestScope, limits: ManifestLimits) throws(ManifestError) {
        scanner = try MPDScanner(bytes)
        mpdURL = ManifestURI(url)
        self.scope = scope
        self.limits = limits
        edits.reserveCapacity(64)
    }

    mutating func run() throws(ManifestError) -> ParsedManifest {
        while let token = try scanner.next() {
            switch token {
            case .startElement: try start()
            case .endElement: try end()
            case .text(let range):
                if let top = frames.last, top.kind == .baseURL || top.kind == .location {
                    frames[frames.count - 1].textRanges.append(range)
                }
            case .comment(let range), .processingInstruction(let range), .cdata(let range):
                if let top = frames.last, top.kind == .baseURL || top.kind == .location {
                    throw ManifestError("a comment, processing instruction or CDATA section inside a BaseURL or Location", at: range.lowerBound)
                }
            }
        }
        if templateNamesRepresentationID, let unsafe = representationIDs.first(where: { !DASHTemplate.isSafeRepresentationID($0.id) }) {
            throw ManifestError(
                "a Representation id '\(unsafe.id)' that $RepresentationID$ would turn into a separator, an escape or a dot segment",
                at: unsafe.offset
            )
        }
        edits.sort { $0.range.lowerBound < $1.range.lowerBound }
        return ParsedManifest(bytes: scanner.input, format: .dash, edits: edits, isLive: isLive, durationSeconds: durationSeconds, scope: scope)
    }

    // MARK: - Elements

    mutating func start() throws(ManifestError) {
        let element = scanner.element
        let offset = element.range.lowerBound - 1
        for attribute in scanner.attributes where attribute.name.namespace == DASHManifestReader.xlinkNamespace && attribute.name.localName == "href"
        {
            throw ManifestError(
                "a remote element (xlink:href), which the gate would have to fetch and rewrite too",
                at: attribute.name.range.lowerBound
            )
        }
        if let top = frames.last, top.kind == .baseURL || top.kind == .location {
            throw ManifestError("an element inside a BaseURL or Location", at: offset)
        }
        let name = element.localName
        // URL query information (ISO/IEC 23009-1 Annex I) is kept as written, except
        // useMPDUrlQuery: a player would append the MPD's query, the viewer's session
        // on the gate, to every segment request, and the session would leave for the CDN.
        if name == "UrlQueryInfo" || name == "ExtUrlQueryInfo",
            let use = scanner.attributes.first(where: { $0.name.namespace == nil && $0.name.localName == "useMPDUrlQuery" }),
            ["true", "1"].contains(try scanner.value(of: use))
        {
            throw ManifestError("\(name)@useMPDUrlQuery, which would carry the viewer's session to the CDN", at: offset)
        }
        guard element.isDASH else {
            if frames.isEmpty { throw ManifestError("a root element that is not DASH's MPD", at: offset) }
            if DASHManifestReader.placedNames.contains(name) {
                throw ManifestError("a '\(name)' element outside DASH's namespace", at: offset)
            }
            frames.append(Frame(kind: .other, level: frames.last?.level ?? 0, offset: offset))
            return
        }
        let parentKind = frames.last?.kind
        let levelIndex = frames.last?.level ?? 0
        func requireParent(_ kinds: [Kind]) throws(ManifestError) {
            guard let parentKind, kinds.contains(parentKind) else {
                throw ManifestError("a '\(name)' element where DASH does not place one", at: offset)
            }
        }
        if frames.isEmpty, name != "MPD" { throw ManifestError("a root element that is not DASH's MPD", at: offset) }
        switch name {
        case "MPD":
            guard frames.isEmpty else { throw ManifestError("an MPD element inside the MPD", at: offset) }
            try readMPDAttributes()
            levels.append(Level(parentBase: mpdURL, base: mpdURL))
            frames.append(Frame(kind: .mpd, level: 0, offset: offset))
        case "Period", "AdaptationSet", "Representation":
            let kind: Kind = name == "Period" ? .period : name == "AdaptationSet" ? .adaptationSet : .representation
            try requireParent([name == "Period" ? .mpd : name == "AdaptationSet" ? .period : .adaptationSet])
            levels[levelIndex].resolvableSeen = true
            levels[levelIndex].childLevelSeen = true
            let parent = levels[levelIndex]
            var level = Level(parentBase: parent.base, base: parent.base)
            level.segmentLinksAbove = parent.segmentLinksAbove || parent.segmentLinksHere
            level.mediaInScope = parent.mediaInScope
            levels.append(level)
            if kind == .representation, let id = scanner.attributes.first(where: { $0.name.namespace == nil && $0.name.localName == "id" }) {
                representationIDs.append((try scanner.value(of: id), id.valueRange.lowerBound))
            }
            frames.append(Frame(kind: kind, level: levels.count - 1, offset: offset))
        case "BaseURL":
            try requireParent([.mpd, .period, .adaptationSet, .representation])
            let level = levels[levelIndex]
            if level.resolvableSeen {
                throw ManifestError("a BaseURL after the segment information or the levels it would be the base of", at: offset)
            }
            if level.segmentLinksAbove {
                throw ManifestError(
                    "a BaseURL beneath a level whose segment URIs it would change (the inherited URIs are written absolute)",
                    at: offset
                )
            }
            if scanner.attributes.contains(where: { $0.name.namespace == nil && $0.name.localName == "byteRange" }) {
                throw ManifestError("a BaseURL with @byteRange, whose requests the gate cannot foresee", at: offset)
            }
            frames.append(Frame(kind: .baseURL, level: levelIndex, offset: offset))
        case "Location":
            try requireParent([.mpd])
            frames.append(Frame(kind: .location, level: levelIndex, offset: offset))
        case "PatchLocation", "ContentSteering":
            throw ManifestError("'\(name)', which the gate does not rewrite", at: offset)
        case "SegmentTemplate", "SegmentList", "SegmentBase":
            try requireParent([.period, .adaptationSet, .representation])
            if levels[levelIndex].childLevelSeen {
                throw ManifestError("segment information after the levels that would inherit it", at: offset)
            }
            levels[levelIndex].resolvableSeen = true
            let kind: Kind = name == "SegmentTemplate" ? .segmentTemplate : name == "SegmentList" ? .segmentList : .segmentBase
            if kind == .segmentList { levels[levelIndex].mediaInScope = true }
            if kind == .segmentTemplate {
                for attribute in scanner.attributes where attribute.name.namespace == nil {
                    switch attribute.name.localName {
                    case "media":
                        levels[levelIndex].mediaInScope = true
                        try link(attribute, level: levelIndex, template: true)
                    case "initialization", "index", "bitstreamSwitching":
                        try link(attribute, level: levelIndex, template: true)
                    default: break
                    }
                }
            }
            frames.append(Frame(kind: kind, level: levelIndex, offset: offset))
        case "Initialization", "RepresentationIndex", "BitstreamSwitching":
            try requireParent([.segmentBase, .segmentList, .segmentTemplate])
            for attribute in scanner.attributes where attribute.name.namespace == nil && attribute.name.localName == "sourceURL" {
                try link(attribute, level: levelIndex, template: false)
            }
            frames.append(Frame(kind: .other, level: levelIndex, offset: offset))
        case "SegmentURL":
            try requireParent([.segmentList])
            for attribute in scanner.attributes where attribute.name.namespace == nil {
                if attribute.name.localName == "media" || attribute.name.localName == "index" {
                    try link(attribute, level: levelIndex, template: false)
                }
            }
            frames.append(Frame(kind: .other, level: levelIndex, offset: offset))
        default:
            frames.append(Frame(kind: .other, level: levelIndex, offset: offset))
        }
    }

    mutating func end() throws(ManifestError) {
        guard let frame = frames.popLast() else { return }
        switch frame.kind {
        case .baseURL:
            let reference = try uriText(of: frame, what: "BaseURL")
            let level = frame.level
            if levels[level].baseURLs.isEmpty {
                levels[level].base = reference.uri.resolved(against: levels[level].parentBase)
            }
            levels[level].baseURLs.append((reference.range, reference.uri, frame.offset))
        case .location:
            let reference = try uriText(of: frame, what: "Location")
            let (mpdURL, scope) = (self.mpdURL, self.scope)
            try append(reference.range, at: frame.offset) { () throws(ManifestError) in
                try ManifestLink(reference: reference.uri, base: mpdURL, role: .playlist, scope: scope, escaping: .xml)
            }
        case .mpd, .period, .adaptationSet, .representation:
            if frame.kind == .representation, !levels[frame.level].mediaInScope,
                let fetchedLevel = levels[...frame.level].lastIndex(where: { !$0.baseURLs.isEmpty })
            {
                levels[fetchedLevel].fetched = true
            }
            let level = levels[frame.level]
            let scope = self.scope
            for baseURL in level.baseURLs {
                try append(baseURL.range, at: baseURL.offset) { () throws(ManifestError) in
                    try ManifestLink(
                        reference: baseURL.reference,
                        base: level.parentBase,
                        role: level.fetched ? .media : .base,
                        scope: scope,
                        escaping: .xml
                    )
                }
            }
            // Levels are appended as they begin and each ends before its parent: this one is last.
            levels.removeLast()
        default:
            break
        }
    }

    // MARK: - URIs

    mutating func readMPDAttributes() throws(ManifestError) {
        for attribute in scanner.attributes where attribute.name.namespace == nil {
            switch attribute.name.localName {
            case "type":
                switch try scanner.value(of: attribute) {
                case "dynamic": isLive = true
                case "static": isLive = false
                default: throw ManifestError("an MPD type that is neither static nor dynamic", at: attribute.valueRange.lowerBound)
                }
            case "mediaPresentationDuration":
                do {
                    durationSeconds = try MPDDuration.seconds(try scanner.value(of: attribute))
                } catch {
                    throw error.at(line: nil, offset: attribute.valueRange.lowerBound)
                }
            default: break
            }
        }
    }

    /// A segment URI in an attribute, resolved against its level's base and written absolute with the token.
    mutating func link(_ attribute: MPDAttribute, level: Int, template: Bool) throws(ManifestError) {
        let offset = attribute.valueRange.lowerBound
        let value = try scanner.value(of: attribute)
        try checkURIText(value, at: offset)
        let base = levels[level].base
        var text = value
        if template {
            do {
                let form = try DASHTemplate.placeholderForm(value)
                text = form.text
                if form.namesRepresentationID { templateNamesRepresentationID = true }
            } catch {
                throw error.at(line: nil, offset: offset)
            }
            if base.description.utf8.contains(UInt8(ascii: "$")) {
                throw ManifestError("a base holding '$' under a SegmentTemplate, where it would start an identifier", at: offset)
            }
        }
        let scope = self.scope
        try append(attribute.valueRange, at: offset) { () throws(ManifestError) in
            let reference = try ManifestURI(parsing: text.utf8)
            let link = try ManifestLink(reference: reference, base: base, role: .media, scope: scope, escaping: template ? .dashTemplate : .xml)
            return template ? ManifestLink(restoringTemplateFormatsOf: link) : link
        }
        levels[level].segmentLinksHere = true
    }

    /// The URI written as a `BaseURL`'s or `Location`'s text: one run of
    /// text, white space around it dropped (`xs:anyURI` collapses it), none inside.
    func uriText(of frame: Frame, what: String) throws(ManifestError) -> (range: Range<Int>, uri: ManifestURI) {
        guard frame.textRanges.count == 1, var range = frame.textRanges.first else {
            throw ManifestError("an empty \(what)", at: frame.offset)
        }
        while !range.isEmpty, MPDScanner.isSpace(scanner.input[range.lowerBound]) { range = (range.lowerBound + 1)..<range.upperBound }
        while !range.isEmpty, MPDScanner.isSpace(scanner.input[range.upperBound - 1]) { range = range.lowerBound..<(range.upperBound - 1) }
        let value = try scanner.text(in: range)
        try checkURIText(value, at: range.lowerBound)
        do {
            return (range, try ManifestURI(parsing: value.utf8))
        } catch {
            throw error.at(line: nil, offset: range.lowerBound)
        }
    }

    func checkURIText(_ value: String, at offset: Int) throws(ManifestError) {
        if value.isEmpty { throw ManifestError("an empty URI", at: offset) }
        if value.utf8.contains(where: { MPDScanner.isSpace($0) }) {
            throw ManifestError("a URI holding white space, which players would each read their own way", at: offset)
        }
    }

    mutating func append(_ range: Range<Int>, at offset: Int, _ make: () throws(ManifestError) -> ManifestLink) throws(ManifestError) {
        guard edits.count < limits.maximumLinks else { throw ManifestError("more than \(limits.maximumLinks) URIs in one manifest", at: offset) }
        let link: ManifestLink
        do {
            link = try make()
        } catch {
            throw error.at(line: nil, offset: offset)
        }
        edits.append(ManifestEdit(range: range, link: link))
    }
}

extension ManifestLink {
    /// `link` with each template format tag's placeholder (``DASHTemplate``) written back as `%`.
    init(restoringTemplateFormatsOf link: ManifestLink) {
        let uri = link.resolved
        role = link.role
        resolved = ManifestURI(
            scheme: uri.scheme,
            authority: DASHTemplate.restored(uri.authority),
            path: DASHTemplate.restored(uri.path),
            query: DASHTemplate.restored(uri.query),
            fragment: DASHTemplate.restored(uri.fragment)
        )
        classification = link.classification
        escaping = link.escaping
        switch link.writing {
        case .fixed(let bytes): writing = .fixed(DASHTemplate.restored(bytes))
        case .token(let prefix, let suffix): writing = .token(prefix: DASHTemplate.restored(prefix), suffix: DASHTemplate.restored(suffix))
        case .gate(let prefix, let suffix): writing = .gate(prefix: DASHTemplate.restored(prefix), suffix: DASHTemplate.restored(suffix))
        }
    }
}
