/// The checks over the whole table: references, derivations, sizes, coded streams, profile.
extension HEIFContainer.Tables {
    typealias FourCC = HEIFContainer.FourCC
    typealias Limits = HEIFContainer.Limits

    private static let coded: Set<FourCC> = [FourCC("hvc1"), FourCC("av01")]
    private static let derived: Set<FourCC> = [FourCC("grid"), FourCC("iovl"), FourCC("iden")]

    func check(limits: DecodingLimits) throws(ImageCodecError) -> HEIFContainer {
        guard let primaryItem = items[primary] else { throw .corruptData("HEIF: the primary item \(primary) is not in 'iinf'") }
        try checkGraph()
        // What libheif decodes: the primary image and the alpha plane attached to it.
        var decoded = [primary]
        for reference in references where reference.type == FourCC("auxl") && reference.to.contains(primary) {
            if isAlpha(reference.from) { decoded.append(reference.from) }
        }
        // The coded images each decoded item is made of, and the bytes libheif reads for them:
        // each item's data once per reference (a grid may name one tile many times, and items
        // may share bytes). Shared bytes are fine (a file's thumbnails may all point at one),
        // but not bytes the decode would read over and over: what it reads is bounded by the
        // file's own size, before any stream is parsed.
        var codedInputs: [UInt32] = []
        var primaryInputs: Set<UInt32> = []
        var bytesRead = 0
        for id in decoded {
            // A primary image of another kind (JPEG, uncompressed, a MIME item) is not checked
            // here, so it never reaches libheif. An alpha plane of one is not decoded by libheif
            // (it papers over it), so it is left out.
            guard let type = items[id]?.type, Self.coded.contains(type) || Self.derived.contains(type) || id != primary else {
                throw .unsupportedFormat(.heifVariant("item \(id) is coded as '\(items[id]?.type ?? FourCC(value: 0))', not HEVC or AV1"))
            }
            let coded = try self.codedInputs(of: id, limits: limits)
            codedInputs += coded
            if id == primary { primaryInputs.formUnion(coded) }
            for item in coded + (coded == [id] ? [] : [id]) {
                bytesRead += items[item]?.extents.reduce(0) { $0 + $1.count } ?? 0
            }
        }
        let readable = Swift.max(Limits.readFactor * bytes.count, Limits.readAllowance)
        guard bytesRead <= readable else {
            throw .limitExceeded(
                "HEIF: the image's items make the library read \(bytesRead) bytes of a \(bytes.count)-byte file, more than \(readable)")
        }
        var codedImages = 0
        var largest = 0
        var codedPixels = 0
        // A grid may name one tile item many times: libheif decodes each reference, so each is
        // counted, but an item's size and stream are read and checked once.
        var sizes: [UInt32: (width: Int, height: Int)] = [:]
        var primaryFormats: [HEVCSampleFormat?] = []
        for input in codedInputs {
            codedImages += 1
            let (width, height): (Int, Int)
            if let known = sizes[input] {
                (width, height) = known
            } else {
                (width, height) = try size(of: input, limits: limits)
                let format = try checkCodedSize(of: input, width: width, height: height)
                if primaryInputs.contains(input) { primaryFormats.append(format) }
                sizes[input] = (width, height)
            }
            largest = max(largest, width * height)
            codedPixels += width * height
        }
        // Tiles covering a canvas add less than a row and a column of tiles; overlays' layers
        // could repeat a full canvas each.
        guard codedPixels <= 2 * limits.maxPixelCount else {
            throw .limitExceeded("HEIF: the primary image decodes \(codedPixels) coded pixels, more than \(2 * limits.maxPixelCount)")
        }
        let (width, height) = try size(of: primary, limits: limits)
        return HEIFContainer(
            primaryItem: primary, declaredWidth: width, declaredHeight: height, codedImages: codedImages, largestCodedPixels: largest,
            hevcFormat: Set(primaryFormats).count == 1 ? primaryFormats[0] : nil,
            cropsCleanAperture: primaryItem.properties.contains { properties[$0 - 1].type == FourCC("clap") },
            iccProfile: iccProfile(of: primaryItem), exif: exif(of: primary))
    }

    /// No reference to an item the file lacks, no cycle (libheif follows references
    /// recursively), no path longer than the bound: Kahn's topological order, linear in items
    /// and references. `prem` (an image → its premultiplied alpha) is the one reference that
    /// sound files point back along (the alpha's `auxl` points to the image): libheif only
    /// reads it as a flag, so it stays out of the graph.
    private func checkGraph() throws(ImageCodecError) {
        var edges: [UInt32: [UInt32]] = [:]
        var incoming: [UInt32: Int] = [:]
        for reference in references {
            guard items[reference.from] != nil else { throw .corruptData("HEIF: a reference from item \(reference.from), which the file lacks") }
            for target in reference.to where reference.type != FourCC("prem") {
                guard items[target] != nil else { throw .corruptData("HEIF: a reference to item \(target), which the file lacks") }
                edges[reference.from, default: []].append(target)
                incoming[target, default: 0] += 1
            }
        }
        var ready = items.keys.filter { incoming[$0, default: 0] == 0 }
        var depth: [UInt32: Int] = [:]
        var visited = 0
        while let item = ready.popLast() {
            visited += 1
            let next = depth[item, default: 0] + 1
            for target in edges[item, default: []] {
                guard next <= Limits.maxReferenceDepth else {
                    throw .limitExceeded("HEIF: a chain of item references deeper than \(Limits.maxReferenceDepth)")
                }
                depth[target] = max(depth[target, default: 0], next)
                incoming[target, default: 0] -= 1
                if incoming[target] == 0 { ready.append(target) }
            }
        }
        guard visited == items.count else { throw .corruptData("HEIF: item references form a cycle") }
    }

    private func isAlpha(_ id: UInt32) -> Bool {
        guard let item = items[id] else { return false }
        return item.properties.contains { index in
            let property = properties[index - 1]
            guard property.type == FourCC("auxC") else { return false }
            // "urn:mpeg:hevc:2015:auxid:1" or "urn:mpeg:mpegB:cicp:systems:auxiliary:alpha".
            let urn = String(decoding: bytes[property.payload.dropFirst(4)].prefix { $0 != 0 }, as: UTF8.self)
            return urn.hasSuffix(":alpha") || urn.hasSuffix("auxid:1")
        }
    }

    /// The coded images `id` is made of: itself when it is coded; a derived image's inputs,
    /// which must all be coded (no grid of grids), with a grid's or an overlay's count bounded.
    private func codedInputs(of id: UInt32, limits: DecodingLimits) throws(ImageCodecError) -> [UInt32] {
        guard let item = items[id] else { return [] }
        if Self.coded.contains(item.type) { return [id] }
        guard Self.derived.contains(item.type) else { return [] }
        let inputs = references.filter { $0.type == FourCC("dimg") && $0.from == id }.flatMap(\.to)
        guard !inputs.isEmpty else { throw .corruptData("HEIF: the derived image \(id) has no inputs") }
        for input in inputs where !Self.coded.contains(items[input]?.type ?? FourCC(value: 0)) {
            throw .limitExceeded("HEIF: the derived image \(id) is built from item \(input), which is not a coded image (no grid of grids)")
        }
        switch item.type {
        case FourCC("grid"): try checkGrid(id, inputs: inputs, limits: limits)
        case FourCC("iovl"):
            guard inputs.count <= Limits.maxOverlayLayers else {
                throw .limitExceeded("HEIF: an overlay of \(inputs.count) layers, more than \(Limits.maxOverlayLayers)")
            }
            // ImageOverlay: version, flags (bit 0: 32-bit fields), four 16-bit fill values, canvas.
            let data = itemBytes(id, count: 20)
            let field = data.count > 1 && data[1] & 1 == 1 ? 4 : 2
            guard data.count >= 10 + 2 * field else { throw .corruptData("HEIF: the overlay descriptor of item \(id) is too short") }
            try checkCanvas(id, width: data.bigEndian(at: 10, field), height: data.bigEndian(at: 10 + field, field), limits: limits)
        default:
            guard inputs.count == 1 else { throw .corruptData("HEIF: an identity image with \(inputs.count) inputs") }
        }
        return inputs
    }

    /// A grid's descriptor (`ImageGrid`): rows × columns = its inputs, at most the bound, all
    /// tiles one size, covering the canvas with less than a tile to spare.
    private func checkGrid(_ id: UInt32, inputs: [UInt32], limits: DecodingLimits) throws(ImageCodecError) {
        guard inputs.count <= Limits.maxGridTiles else {
            throw .limitExceeded("HEIF: a grid of \(inputs.count) tiles, more than \(Limits.maxGridTiles)")
        }
        let data = itemBytes(id, count: 12)
        guard data.count >= 8 else { throw .corruptData("HEIF: the grid descriptor of item \(id) is too short") }
        let wide = data[1] & 1 == 1
        let rows = Int(data[2]) + 1
        let columns = Int(data[3]) + 1
        guard !wide || data.count >= 12 else { throw .corruptData("HEIF: the grid descriptor of item \(id) is too short") }
        let field = wide ? 4 : 2
        let (width, height) = (data.bigEndian(at: 4, field), data.bigEndian(at: 4 + field, field))
        guard rows * columns == inputs.count else {
            throw .corruptData("HEIF: a \(columns)×\(rows) grid with \(inputs.count) tiles")
        }
        try checkCanvas(id, width: width, height: height, limits: limits)
        let (tileWidth, tileHeight) = try size(of: inputs[0], limits: limits)
        for tile in inputs.dropFirst() where try size(of: tile, limits: limits) != (tileWidth, tileHeight) {
            throw .corruptData("HEIF: the tiles of grid \(id) differ in size")
        }
        guard columns * tileWidth >= width, (columns - 1) * tileWidth < width, rows * tileHeight >= height, (rows - 1) * tileHeight < height
        else {
            throw .corruptData("HEIF: \(columns)×\(rows) tiles of \(tileWidth)×\(tileHeight) do not fit a \(width)×\(height) grid")
        }
    }

    /// A derived image's canvas (what libheif allocates) is within the limits and no larger on
    /// a side than its `ispe` (what the plan counts).
    private func checkCanvas(_ id: UInt32, width: Int, height: Int, limits: DecodingLimits) throws(ImageCodecError) {
        try limits.check(width: width, height: height)
        let (declaredWidth, declaredHeight) = try size(of: id, limits: limits)
        guard width <= declaredWidth, height <= declaredHeight else {
            throw .limitExceeded(
                "HEIF: the derived image \(id) has a \(width)×\(height) canvas, its 'ispe' declares \(declaredWidth)×\(declaredHeight)")
        }
    }

    /// An image's `ispe`, within the limits.
    func size(of id: UInt32, limits: DecodingLimits) throws(ImageCodecError) -> (Int, Int) {
        guard let ispe = items[id]?.properties.lazy.map({ properties[$0 - 1] }).first(where: { $0.type == FourCC("ispe") }) else {
            throw .corruptData("HEIF: item \(id) has no size ('ispe')")
        }
        guard ispe.payload.count >= 12 else { throw .corruptData("HEIF: a short 'ispe' box") }
        let fields = bytes[ispe.payload]
        let width = fields.dropFirst(4).prefix(4).reduce(0) { $0 << 8 | Int($1) }
        let height = fields.dropFirst(8).prefix(4).reduce(0) { $0 << 8 | Int($1) }
        try limits.check(width: width, height: height)
        return (width, height)
    }

    /// The primary image's ICC profile: its first `colr` of type `prof` or `rICC` (the size was
    /// bounded when the properties were read).
    private func iccProfile(of item: HEIFContainer.Item) -> Range<Int>? {
        for index in item.properties {
            let box = properties[index - 1]
            guard box.type == FourCC("colr"), box.payload.count > 4 else { continue }
            let kind = bytes[box.payload.lowerBound..<box.payload.lowerBound + 4]
            if kind.elementsEqual("prof".utf8) || kind.elementsEqual("rICC".utf8) { return box.payload.lowerBound + 4..<box.payload.upperBound }
        }
        return nil
    }

    /// The first `Exif` item that describes `primary` (`cdsc`), when it sits in one extent, as
    /// writers put it.
    private func exif(of primary: UInt32) -> Range<Int>? {
        for reference in references where reference.type == FourCC("cdsc") && reference.to.contains(primary) {
            guard let item = items[reference.from], item.type == FourCC("Exif"), item.extents.count == 1 else { continue }
            return item.extents[0]
        }
        return nil
    }

    /// The first `count` bytes of an item's data, across its extents.
    func itemBytes(_ id: UInt32, from start: Int = 0, count: Int) -> [UInt8] {
        var result: [UInt8] = []
        var skip = start
        for extent in items[id]?.extents ?? [] where result.count < count {
            if skip >= extent.count {
                skip -= extent.count
                continue
            }
            let take = min(extent.count - skip, count - result.count)
            result += bytes[extent.lowerBound + skip..<extent.lowerBound + skip + take]
            skip = 0
        }
        return result
    }
}

extension [UInt8] {
    /// The big-endian number of `count` bytes at `offset` (the caller checked the length).
    fileprivate func bigEndian(at offset: Int, _ count: Int) -> Int {
        self[offset..<offset + count].reduce(0) { $0 << 8 | Int($1) }
    }
}
