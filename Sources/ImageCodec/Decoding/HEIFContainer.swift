/// What a HEIC or AVIF file's container (ISO BMFF, ISO/IEC 23008-12) holds, read and checked
/// in Swift before libheif sees a byte, as ``WebPContainer`` is in front of libwebp.
///
/// libheif 1.15 trusts the container's shape: a grid whose `dimg` references form a cycle
/// recurses until the stack overflows, tens of thousands of items or tiles take it seconds to
/// minutes, a 24 MB `colr` profile is copied four times, and an `ispe` that understates the coded
/// size lets the codec allocate what the plan never counted. The walker refuses each of these
/// shapes first, with work proportional to the boxes it reads and tables bounded by
/// ``Limits``, so the library only ever meets a container of a shape that real files have.
///
/// What passes: one `meta` box; at most ``Limits/maxItems`` items; references without a cycle,
/// no path longer than ``Limits/maxReferenceDepth``; derived images (`grid`, `iovl`, `iden`)
/// built only from coded images (no grid of grids: no camera writes one); a grid of at most
/// ``Limits/maxGridTiles`` tiles of one size that cover its canvas with less than a tile to
/// spare; an overlay of at most ``Limits/maxOverlayLayers`` layers; every extent inside the file
/// (or `idat`), and the items the image is decoded from adding up to at most
/// ``Limits/readFactor`` times the file (items may share bytes, as a file's thumbnails do, but
/// the decode may not read them over and over); colour profiles within
/// ``DecodingLimits/maxICCProfileBytes``; and every HEVC or AV1 stream coded at the size its
/// `ispe` declares.
struct HEIFContainer: Sendable, Hashable {
    /// How far a container may go. Each bound is far above what phones and cameras write and
    /// far below where libheif's cost stops being proportional to the pixels.
    enum Limits {
        /// Items in `iinf` (and entries in `iloc` and `ipma`). A 48 MP iPhone photo has about
        /// 230 (192 tiles, a gain map's and a thumbnail's grids, EXIF, XMP); libheif's cost grows
        /// faster than the count (19,000 items: 15.6 s in `heif-info` alone).
        static let maxItems = 2_048
        /// Tiles of one grid. A phone's grid has at most a few hundred (8064×6048 in 512 px tiles:
        /// 192); 16384² in 512 px tiles is 1,024. libheif decodes tile by tile with a codec
        /// set up for each, about 0.3-0.6 ms apiece before any pixel: 1,024 tiles cost at most
        /// about half a second of overhead.
        static let maxGridTiles = 1_024
        /// Layers of an overlay (`iovl`), each decoded and composited on its own.
        static let maxOverlayLayers = 64
        /// Longest chain of references of any type (an alpha plane's grid → the primary grid →
        /// its tiles is 2).
        static let maxReferenceDepth = 4
        /// Nesting of boxes inside boxes (`meta` > `iprp` > `ipco` > a property is 4): libheif
        /// parses every container it meets recursively, wherever it stands.
        static let maxBoxDepth = 8
        /// Boxes in the whole container.
        static let maxBoxes = 16_384
        /// Properties in `ipco` and associations in `ipma`.
        static let maxProperties = 1_024
        static let maxAssociations = 16_384
        /// The bytes the items of the decoded image may add up to (extents shared by several
        /// items, or a tile named many times, are counted each time libheif reads them), as a
        /// multiple of the file's size, or ``readAllowance`` if that is more: a file whose 1,024
        /// tiles all point at its 64 MB of data would have libheif read and decode 64 GB.
        static let readFactor = 4
        static let readAllowance = 16 << 20
        /// Extents of one item (libheif's own bound) and of the whole file.
        static let maxExtentsPerItem = 32
        static let maxExtents = 8_192
        /// References in all of `iref`.
        static let maxReferences = 8_192
        /// A property other than a colour profile (`hvcC` is about 100 bytes, `av1C` 4-30): every
        /// tile's decode is handed its codec configuration again.
        static let maxPropertyBytes = 64 << 10
        /// Pixels a coded stream may have beyond its `ispe` on each side: HEVC codes whole
        /// coding blocks (up to 64 px) and crops the rest away.
        static let codedPadding = 64
    }

    /// The primary image's item.
    var primaryItem: UInt32
    /// The primary image's `ispe`, before any transformation (`irot`, `clap`).
    var declaredWidth: Int
    var declaredHeight: Int
    /// Coded images libheif decodes for the primary image and its alpha plane (tiles, layers,
    /// or the image itself).
    var codedImages: Int
    /// The largest of those coded images, in pixels: what a codec holds at once.
    var largestCodedPixels: Int
    /// The sample format every coded HEVC image of the primary image declares in its
    /// parameter sets (nil for AV1, or when they differ): what libheif's planes will be.
    var hevcFormat: HEVCSampleFormat?
    /// Whether the primary image has a clean aperture (`clap`) to crop to: an odd offset cuts
    /// through 4:2:0 chroma samples.
    var cropsCleanAperture: Bool
    /// The primary image's ICC profile (a `colr` box of type `prof` or `rICC`), in the file.
    var iccProfile: Range<Int>?
    /// The primary image's EXIF (an `Exif` item that describes it through `cdsc`, in one
    /// extent), in the file: its 4-byte offset to the TIFF header, then the block.
    var exif: Range<Int>?
}

extension HEIFContainer {
    /// Walks `bytes` and checks everything listed above. Throws `truncatedData` for a box or
    /// extent past the end, `limitExceeded` for a shape beyond ``Limits``, and `corruptData` for
    /// a container that is not a sound HEIF.
    init(_ bytes: UnsafeRawBufferPointer, limits: DecodingLimits) throws(ImageCodecError) {
        var walk = Walk(bytes: bytes, limits: limits)
        let meta = try walk.topLevelMeta()
        let tables = try walk.tables(meta)
        self = try tables.check(limits: limits)
    }
}

// MARK: - Boxes

extension HEIFContainer {
    struct Box {
        var type: FourCC
        var payload: Range<Int>
    }

    /// A four-character code, kept as its 32 bits.
    struct FourCC: Hashable, Sendable, CustomStringConvertible {
        var value: UInt32
        init(_ text: StaticString) {
            value = text.withUTF8Buffer { $0.reduce(0) { $0 << 8 | UInt32($1) } }
        }
        init(value: UInt32) { self.value = value }
        var description: String {
            let scalars = (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) }
            return String(decoding: scalars.map { (0x20..<0x7f).contains($0) ? $0 : 0x3f }, as: UTF8.self)
        }
    }

    /// Big-endian reads inside one range of the file; running past its end is `truncatedData`
    /// inside the file and `corruptData` past a box's end.
    struct Cursor {
        let bytes: UnsafeRawBufferPointer
        var offset: Int
        let end: Int

        init(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) {
            (self.bytes, offset, end) = (bytes, range.lowerBound, range.upperBound)
        }

        var remaining: Int { end - offset }

        mutating func skip(_ count: Int) throws(ImageCodecError) {
            guard count >= 0, count <= remaining else { throw .corruptData("a HEIF box ends inside its own fields") }
            offset += count
        }

        /// An unsigned number of `size` bytes (0, 1, 2, 3, 4 or 8); 0 reads as 0.
        mutating func uint(_ size: Int) throws(ImageCodecError) -> UInt64 {
            guard size <= remaining else { throw .corruptData("a HEIF box ends inside its own fields") }
            var value: UInt64 = 0
            for index in 0..<size { value = value << 8 | UInt64(bytes[offset + index]) }
            offset += size
            return value
        }

        mutating func u8() throws(ImageCodecError) -> Int { Int(try uint(1)) }
        mutating func u16() throws(ImageCodecError) -> Int { Int(try uint(2)) }
        mutating func u32() throws(ImageCodecError) -> UInt32 { UInt32(try uint(4)) }

        /// A full box's version and flags.
        mutating func versionAndFlags() throws(ImageCodecError) -> (version: Int, flags: Int) {
            let word = try u32()
            return (Int(word >> 24), Int(word & 0xff_ffff))
        }
    }

    /// Reads box headers: counts every box and bounds the nesting of the containers libheif
    /// would descend into.
    struct Walk {
        let bytes: UnsafeRawBufferPointer
        let limits: DecodingLimits
        var boxes = 0

        init(bytes: UnsafeRawBufferPointer, limits: DecodingLimits) {
            (self.bytes, self.limits) = (bytes, limits)
        }

        /// The boxes inside `range`, in order. A size of 0 (to the end) is honoured at the top
        /// level only, as the format allows.
        /// `counted`: false for a second reading of boxes the first already counted.
        mutating func children(of range: Range<Int>, topLevel: Bool = false, counted: Bool = true) throws(ImageCodecError) -> [Box] {
            var result: [Box] = []
            var offset = range.lowerBound
            while offset < range.upperBound {
                guard range.upperBound - offset >= 8 else {
                    if topLevel { throw .truncatedData }
                    throw .corruptData("HEIF: \(range.upperBound - offset) stray bytes at the end of a box")
                }
                boxes += counted ? 1 : 0
                guard boxes <= Limits.maxBoxes else { throw .limitExceeded("HEIF: more than \(Limits.maxBoxes) boxes") }
                var cursor = Cursor(bytes, offset..<range.upperBound)
                let size32 = try cursor.uint(4)
                let type = FourCC(value: try cursor.u32())
                var size: UInt64 = size32
                if size32 == 1 {
                    guard cursor.remaining >= 8 else { throw topLevel ? .truncatedData : .corruptData("HEIF: a box header is cut short") }
                    size = try cursor.uint(8)
                } else if size32 == 0 {
                    guard topLevel else { throw .corruptData("HEIF: a nested '\(type)' box claims the rest of the file") }
                    size = UInt64(range.upperBound - offset)
                }
                let headerSize = cursor.offset - offset
                guard size >= UInt64(headerSize) else { throw .corruptData("HEIF: the '\(type)' box is smaller than its header") }
                guard size <= UInt64(range.upperBound - offset) else {
                    if topLevel { throw .truncatedData }
                    throw .corruptData("HEIF: the '\(type)' box runs past the box that holds it")
                }
                let end = offset + Int(size)
                result.append(Box(type: type, payload: cursor.offset..<end))
                offset = end
            }
            return result
        }

        /// The container boxes libheif 1.15 reads children of, with the header bytes before the
        /// first child (`iinf`'s depends on its version).
        private func childOffset(_ box: Box) throws(ImageCodecError) -> Int? {
            switch box.type {
            case FourCC("meta"): return 4
            case FourCC("iprp"), FourCC("ipco"), FourCC("dinf"), FourCC("grpl"): return 0
            case FourCC("dref"): return 8
            case FourCC("iinf"):
                guard box.payload.count >= 1 else { throw .corruptData("HEIF: an empty 'iinf' box") }
                return bytes[box.payload.lowerBound] == 0 ? 6 : 8
            default: return nil
            }
        }

        /// Checks the nesting under `box` wherever a container stands (libheif parses a `meta`
        /// inside `ipco` as readily as at the top), and that each container's children fit.
        mutating func checkNesting(_ box: Box, depth: Int) throws(ImageCodecError) {
            guard let skip = try childOffset(box) else { return }
            guard depth <= Limits.maxBoxDepth else { throw .limitExceeded("HEIF: boxes nested more than \(Limits.maxBoxDepth) deep") }
            guard box.payload.count >= skip else { throw .corruptData("HEIF: the '\(box.type)' box is too short") }
            for child in try children(of: box.payload.lowerBound + skip..<box.payload.upperBound) {
                try checkNesting(child, depth: depth + 1)
            }
        }

        /// `ftyp` first, then exactly one `meta` box among the top-level boxes.
        mutating func topLevelMeta() throws(ImageCodecError) -> Box {
            let top = try children(of: 0..<bytes.count, topLevel: true)
            guard top.first?.type == FourCC("ftyp") else { throw .corruptData("HEIF: the file does not start with 'ftyp'") }
            let metas = top.filter { $0.type == FourCC("meta") }
            guard metas.count == 1, let meta = metas.first else {
                throw .corruptData(metas.isEmpty ? "HEIF: no 'meta' box" : "HEIF: more than one top-level 'meta' box")
            }
            for box in top { try checkNesting(box, depth: 1) }
            return meta
        }
    }
}
